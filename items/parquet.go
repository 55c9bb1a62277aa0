//go:build !noparquet

package items

import (
	"fmt"
	"io"
	"os"
	"reflect"

	"github.com/parquet-go/parquet-go"
)

// readParquetRows reads every row of a parquet release by s, column by column: each column of the
// file's schema must be a field of s (after --map; --ignore leaves one out) of s's type (a string, a
// list of strings, a number), and the required fields must be columns. A flipped bit in the footer
// that renames a column is then an error naming it, not rows without that field. A malformed file is
// an error naming it (the reader panics on some corruptions; that is recovered here). Builds with
// -tags noparquet leave the reader out (parquet_off.go).
func readParquetRows(path string, s *schema, km *keyMap) (rows []row, err error) {
	defer func() {
		if r := recover(); r != nil {
			rows, err = nil, fmt.Errorf("%s: not a readable parquet file: %v", path, r)
		}
	}()
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	f, err := parquet.OpenFile(fh, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	typ, names, err := parquetColumns(path, f, s, km)
	if err != nil {
		return nil, err
	}
	r := parquet.NewReader(f)
	defer r.Close()
	for n := 1; ; n++ {
		v := reflect.New(typ)
		if err := r.Read(v.Interface()); err == io.EOF {
			return rows, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: row %d: %v", path, n, err)
		}
		out := row{}
		for i, name := range names {
			fv := v.Elem().Field(i)
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue // null
				}
				fv = fv.Elem()
			}
			out[name] = fv.Interface()
		}
		if err := s.checkRow(path, fmt.Sprintf("row %d: ", n), out, km); err != nil {
			return nil, err
		}
		rows = append(rows, out)
	}
}

// parquetColumns checks the file's columns against s and returns the Go type a row is read into (one
// field per column read, tagged with the column's name) and the fields of s they hold.
func parquetColumns(path string, f *parquet.File, s *schema, km *keyMap) (reflect.Type, []string, error) {
	var fields []reflect.StructField
	var names []string
	have := map[string]bool{}
	for _, col := range f.Schema().Fields() {
		key := col.Name()
		if km.ignore[key] {
			continue
		}
		name, ok := km.field[key]
		if !ok {
			return nil, nil, s.unknownKey(path, fmt.Sprintf("column %q: ", key), key)
		}
		k := s.fieldByName(name).kind
		if got := parquetKind(col); got != k {
			return nil, nil, fmt.Errorf("%s: column %q is %s, %s has it as %s", path, key, got, s.what, k)
		}
		gt, tag := reflect.TypeFor[*string](), key+",optional"
		switch k {
		case kList:
			gt, tag = reflect.TypeFor[[]string](), key+",list,optional"
		case kNumber:
			gt = reflect.TypeFor[*float64]()
		}
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", len(fields)), Type: gt, Tag: reflect.StructTag(`parquet:"` + tag + `"`)})
		names = append(names, name)
		have[name] = true
	}
	for _, fl := range s.fields {
		if fl.required && !have[fl.name] {
			return nil, nil, s.missingKey(path, "", km, fl.name)
		}
	}
	return reflect.StructOf(fields), names, nil
}

// parquetKind is the kind of a column: a string (a byte array, a STRING), a list of strings (a LIST
// of them), a number (a float or integer), or -1 for anything else.
func parquetKind(col parquet.Field) kind {
	switch t := col.Type().String(); {
	case col.Leaf() && col.Type().Kind() == parquet.ByteArray:
		return kString
	case col.Leaf() && (col.Type().Kind() == parquet.Double || col.Type().Kind() == parquet.Float ||
		col.Type().Kind() == parquet.Int32 || col.Type().Kind() == parquet.Int64):
		return kNumber
	case t == "LIST" && len(col.Fields()) == 1:
		list := col.Fields()[0]
		if len(list.Fields()) == 1 && list.Fields()[0].Leaf() && list.Fields()[0].Type().Kind() == parquet.ByteArray {
			return kList
		}
	}
	return kind(-1)
}
