package llamacpp

import (
	"bufio"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Libraries are checked before dlopen: dlopen maps a file and runs its constructors, so a truncated
// one dies with SIGBUS inside the loader and a planted one runs its code. A library must be a
// complete ELF shared object for this machine, and, when the install wrote the release's digests
// (Manifest, by scripts/deps.sh), have the digest the release gave it.

// Manifest is the digest list scripts/deps.sh writes beside the libraries it installs, in
// sha256sum's format ("HEX  NAME" per line).
const Manifest = "SHA256SUMS"

// maxLibBytes bounds what is read or hashed as a library (the largest, the CUDA 12 build, is ~374 MB).
const maxLibBytes = 1 << 30

// readManifest returns dir's digests by file name; nil when the install wrote none.
func readManifest(dir string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(dir, Manifest))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 || strings.ContainsAny(name, "/\x00") {
			return nil, fmt.Errorf("%s:%d: not a sha256sum line", filepath.Join(dir, Manifest), n)
		}
		out[strings.TrimPrefix(name, "*")] = strings.ToLower(sum)
	}
	return out, sc.Err()
}

// elfMachine is the ELF machine of this build's architecture.
var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]

// checkLibrary says why the file at path must not be dlopened ("" when it may): not a complete
// 64-bit ELF shared object for this machine, missing one of the symbols wantSyms, or (digests not
// nil) absent from the manifest or with another digest.
func checkLibrary(path string, digests map[string]string, wantSyms ...string) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err.Error()
	}
	if !st.Mode().IsRegular() || st.Size() > maxLibBytes {
		return fmt.Sprintf("not a regular file under %d bytes", int64(maxLibBytes))
	}
	if digests != nil {
		want, ok := digests[filepath.Base(path)]
		if !ok {
			return "not in the release's " + Manifest
		}
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return err.Error()
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			return fmt.Sprintf("sha256 %.12s…, the release's %s says %.12s… (damaged or replaced)", got, Manifest, want)
		}
	}
	return checkELF(f, st.Size(), wantSyms)
}

// checkELF: the header, every segment and section inside the file, and the dynamic symbols named.
func checkELF(f io.ReaderAt, size int64, wantSyms []string) string {
	ef, err := elf.NewFile(f)
	if err != nil {
		return "not a complete ELF file: " + err.Error()
	}
	if ef.Class != elf.ELFCLASS64 || ef.Type != elf.ET_DYN || ef.Machine != elfMachine {
		return fmt.Sprintf("an ELF %v %v for %v, not a shared library for this machine", ef.Class, ef.Type, ef.Machine)
	}
	for _, p := range ef.Progs {
		if p.Off+p.Filesz > uint64(size) || p.Off+p.Filesz < p.Off {
			return fmt.Sprintf("truncated: a segment needs bytes %d..%d, the file has %d", p.Off, p.Off+p.Filesz, size)
		}
	}
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_NOBITS && (s.Offset+s.FileSize > uint64(size) || s.Offset+s.FileSize < s.Offset) {
			return fmt.Sprintf("truncated: section %s needs bytes %d..%d, the file has %d", s.Name, s.Offset, s.Offset+s.FileSize, size)
		}
	}
	if len(wantSyms) == 0 {
		return ""
	}
	syms, err := ef.DynamicSymbols()
	if err != nil {
		return "unreadable dynamic symbols: " + err.Error()
	}
	have := map[string]bool{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF {
			have[s.Name] = true
		}
	}
	for _, w := range wantSyms {
		if !have[w] {
			return "does not export " + w + " (not a ggml backend)"
		}
	}
	return ""
}

// neededLibs is the DT_NEEDED list of the ELF file at path.
func neededLibs(path string) ([]string, error) {
	ef, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	return ef.ImportedLibraries()
}
