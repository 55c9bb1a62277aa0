package record

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
)

// MaxModelBytes bounds a model name.
const MaxModelBytes = 512

// validateModel checks the model fields: a name of at most MaxModelBytes, a weights digest of 64
// lower-case hex digits, a positive context size.
func (r *Record) validateModel() error {
	p, l := r.Source.Path, r.Source.Line
	switch {
	case len(r.Model) > MaxModelBytes:
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: model name of %d bytes (at most %d)", r.ItemID, r.Config, len(r.Model), MaxModelBytes)
	case r.WeightsSHA256 != "" && !isSHA256(r.WeightsSHA256):
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: weights_sha256 %q is not 64 lower-case hex digits", r.ItemID, r.Config, r.WeightsSHA256)
	case r.ContextTokens != nil && *r.ContextTokens < 1:
		return Errorf(p, l, "validate", ErrInvalid, "item %q config %q: context_tokens %d is not positive", r.ItemID, r.Config, *r.ContextTokens)
	}
	return nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// WeightsDigest is a record's weights_sha256 from the digests of the files a runtime spec names
// (Provenance.ModelSHA256, by spec key): the one file's digest, or with several the sha256 of the
// lines "KEY SHA256\n" sorted by key, so anyone can recompute it from model_sha256. "" for none.
func WeightsDigest(files map[string]string) string {
	switch len(files) {
	case 0:
		return ""
	case 1:
		for _, d := range files {
			return d
		}
	}
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k + " " + files[k] + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}
