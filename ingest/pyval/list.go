package pyval

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrList: a value is not a flat Python list literal of strings and numbers.
var ErrList = errors.New("not a Python list literal")

// maxList bounds the literal so a hostile cell cannot cost unbounded work.
const maxList = 1 << 20

// ParseList parses a flat Python list (or tuple) literal such as ['A. x', "B. y's", 3] into strings.
// It accepts single/double-quoted strings with Python escapes (\\ \' \" \n \t \r \xHH \uHHHH \UHHHHHHHH),
// optional r/u prefixes, ints, floats, None, True and False; anything else (names, calls, nested
// containers, expressions) is an error. Nothing is ever evaluated.
func ParseList(s string) ([]string, error) {
	if len(s) > maxList {
		return nil, fmt.Errorf("%w: %d bytes (limit %d)", ErrList, len(s), maxList)
	}
	p := &parser{s: strings.TrimSpace(s)}
	if p.s == "" {
		return nil, fmt.Errorf("%w: empty", ErrList)
	}
	open := p.s[0]
	closeCh := map[byte]byte{'[': ']', '(': ')'}[open]
	if closeCh == 0 {
		return nil, fmt.Errorf("%w: starts with %q", ErrList, p.s[:1])
	}
	p.i = 1
	out := []string{}
	for {
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, fmt.Errorf("%w: unterminated list", ErrList)
		}
		if p.s[p.i] == closeCh {
			p.i++
			break
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, fmt.Errorf("%w: unterminated list", ErrList)
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case closeCh:
		default:
			return nil, fmt.Errorf("%w: unexpected %q at offset %d", ErrList, p.s[p.i], p.i)
		}
	}
	p.skipSpace()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("%w: trailing text at offset %d", ErrList, p.i)
	}
	return out, nil
}

type parser struct {
	s string
	i int
}

func (p *parser) skipSpace() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *parser) value() (string, error) {
	c := p.s[p.i]
	raw := false
	if c == 'r' || c == 'R' || c == 'u' || c == 'U' {
		if p.i+1 < len(p.s) && (p.s[p.i+1] == '\'' || p.s[p.i+1] == '"') {
			raw = c == 'r' || c == 'R'
			p.i++
			c = p.s[p.i]
		}
	}
	if c == '\'' || c == '"' {
		return p.str(c, raw)
	}
	start := p.i
	for p.i < len(p.s) && strings.IndexByte(",])( \t\r\n", p.s[p.i]) < 0 {
		p.i++
	}
	tok := p.s[start:p.i]
	switch tok {
	case "None":
		return "", nil
	case "True", "False":
		return tok, nil
	}
	if _, err := strconv.ParseFloat(strings.ReplaceAll(tok, "_", ""), 64); err == nil && tok != "" && !strings.ContainsAny(tok, "xXnNiI") {
		return tok, nil
	}
	return "", fmt.Errorf("%w: unsupported element %q at offset %d", ErrList, tok, start)
}

func (p *parser) str(q byte, raw bool) (string, error) {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\n':
			return "", fmt.Errorf("%w: newline inside a string", ErrList)
		case c == '\\' && p.i+1 < len(p.s):
			e := p.s[p.i+1]
			if raw {
				b.WriteByte('\\')
				b.WriteByte(e)
				p.i += 2
				continue
			}
			p.i += 2
			switch e {
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if p.i+n > len(p.s) {
					return "", fmt.Errorf("%w: short \\%c escape", ErrList, e)
				}
				v, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
				if err != nil || (e != 'x' && !utf8.ValidRune(rune(v))) {
					return "", fmt.Errorf("%w: bad \\%c escape", ErrList, e)
				}
				b.WriteRune(rune(v))
				p.i += n
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", fmt.Errorf("%w: unterminated string", ErrList)
}
