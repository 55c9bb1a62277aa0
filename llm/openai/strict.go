package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Strict replies. encoding/json takes the last of two equal keys and matches keys to fields without
// regard to case, so {"choices":[…],"choices":[…]} and {"CHOICES":[…]} decode as an answer of the
// server's choosing, and a model list's "MAX_MODEL_LEN" as a context size. A reply is held first to
// what the client means to read: no key twice in an object, and no key that spells a field the client
// reads in other letters (strings.EqualFold, as encoding/json matches them). Either is
// errAmbiguous, naming the key and where it is.

// errAmbiguous marks a reply whose JSON could be read two ways.
var errAmbiguous = errors.New("ambiguous JSON")

// decodeStrict checks data (checkStrict) and decodes it into v.
func decodeStrict(data []byte, v any) error {
	if err := checkStrict(data, reflect.TypeOf(v)); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// checkStrict walks data as the value of type t (what the client decodes it into): every object's
// keys must be distinct, and a key of an object that decodes into a struct must be a field's exact
// name or no field's name in any case. Syntax errors are left to json.Unmarshal.
func checkStrict(data []byte, t reflect.Type) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil {
		return nil // not JSON: json.Unmarshal says why
	}
	err = walkStrict(d, tok, t, "$")
	if errors.Is(err, errAmbiguous) {
		return err
	}
	return nil
}

// walkStrict checks the value that begins with tok.
func walkStrict(d *json.Decoder, tok json.Token, t reflect.Type, at string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar
	}
	switch delim {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; d.More(); i++ {
			tok, err := d.Token()
			if err != nil {
				return err
			}
			if err := walkStrict(d, tok, elem, at+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case '{':
		if err := walkObject(d, t, at); err != nil {
			return err
		}
	}
	_, err := d.Token() // the closing delimiter
	return err
}

// walkObject checks an object's keys and values (its closing brace left to the caller).
func walkObject(d *json.Decoder, t reflect.Type, at string) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	switch {
	case t == nil:
	case t.Kind() == reflect.Struct:
		fields = jsonFields(t)
	case t.Kind() == reflect.Map:
		elem = t.Elem()
	}
	seen := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if seen[key] {
			return fmt.Errorf("%w: key %q twice at %s (a reader takes either)", errAmbiguous, key, at)
		}
		seen[key] = true
		vt := elem
		if fields != nil {
			var ok bool
			if vt, ok = fields[key]; !ok {
				for name := range fields {
					if strings.EqualFold(name, key) {
						return fmt.Errorf("%w: key %q at %s is %q in other letters (a reader would take it for that field)", errAmbiguous, key, at, name)
					}
				}
			}
		}
		if tok, err = d.Token(); err != nil {
			return err
		}
		if err := walkStrict(d, tok, vt, at+"."+key); err != nil {
			return err
		}
	}
	return nil
}

// jsonFields are the JSON names of a struct's fields and their types (as encoding/json names them:
// the tag's name, else the field's; "-" and unexported fields are none).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
