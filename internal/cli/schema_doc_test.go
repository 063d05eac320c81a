package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// This file reads the schemas docs/cli.md publishes in its "JSON output"
// section and checks JSON documents against them.

// docSchema is one type of that notation.
type docSchema struct {
	kind   string     // object, array, enum, ref, or a base type: string int number bool time any-object
	fields []docField // object
	elem   *docSchema // array
	values []string   // enum
	ref    string     // ref: an upper-case name defined in the same block
}

// docField is one field of an object; several names mean exactly one of
// them is present.
type docField struct {
	names    []string
	optional bool
	typ      *docSchema
}

// docSchemas returns the schemas of docs/cli.md by name ("backup", "key
// list", "SUMMARY"...).
func docSchemas(t *testing.T) map[string]*docSchema {
	t.Helper()
	text, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(text), "\n## JSON output\n")
	if !ok {
		t.Fatal(`docs/cli.md has no "## JSON output" section`)
	}
	_, block, ok := strings.Cut(section, "\n```\n")
	block, _, ok2 := strings.Cut(block, "\n```\n")
	if !ok || !ok2 {
		t.Fatal(`docs/cli.md's "JSON output" section has no code block`)
	}
	entryStart := regexp.MustCompile(`^([a-zA-Z_][a-zA-Z_ -]*): `)
	var names, bodies []string
	for _, line := range strings.Split(block, "\n") {
		switch m := entryStart.FindStringSubmatch(line); {
		case strings.TrimSpace(line) == "":
		case m != nil:
			names = append(names, m[1])
			bodies = append(bodies, line[len(m[0]):])
		case len(bodies) > 0 && (line[0] == ' ' || line[0] == '\t'):
			bodies[len(bodies)-1] += " " + strings.TrimSpace(line)
		default:
			t.Fatalf("docs/cli.md JSON output: cannot read line %q", line)
		}
	}
	schemas := map[string]*docSchema{}
	for i, name := range names {
		p := &schemaParser{src: bodies[i]}
		s, err := p.parseAll()
		if err != nil {
			t.Fatalf("docs/cli.md JSON output, %s: %v", name, err)
		}
		if schemas[name] != nil {
			t.Fatalf("docs/cli.md JSON output: %s is defined twice", name)
		}
		schemas[name] = s
	}
	return schemas
}

// schemaParser reads one type of the notation, token by token.
type schemaParser struct {
	src string
	pos int
}

var baseTypes = []string{"string", "int", "number", "bool", "time", "object"}

func (p *schemaParser) parseAll() (*docSchema, error) {
	s, err := p.parseType()
	if err != nil {
		return nil, err
	}
	if tok := p.next(); tok != "" {
		return nil, fmt.Errorf("unexpected %q after the type", tok)
	}
	return s, nil
}

// next returns the next token: a punctuation character, a quoted string
// (quotes kept) or a word; "" at the end.
func (p *schemaParser) next() string {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
	if p.pos == len(p.src) {
		return ""
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case strings.ContainsRune("{}[],:|?", rune(c)):
		p.pos++
	case c == '"':
		end := strings.IndexByte(p.src[p.pos+1:], '"')
		if end < 0 {
			p.pos = len(p.src)
		} else {
			p.pos += end + 2
		}
	default:
		for p.pos < len(p.src) && !strings.ContainsRune("{}[],:|?\" ", rune(p.src[p.pos])) {
			p.pos++
		}
	}
	return p.src[start:p.pos]
}

func (p *schemaParser) peek() string {
	save := p.pos
	tok := p.next()
	p.pos = save
	return tok
}

func (p *schemaParser) expect(want string) error {
	if tok := p.next(); tok != want {
		return fmt.Errorf("got %q at %d, want %q", tok, p.pos, want)
	}
	return nil
}

func (p *schemaParser) parseType() (*docSchema, error) {
	switch tok := p.next(); {
	case tok == "{":
		return p.parseObject()
	case tok == "[":
		elem, err := p.parseType()
		if err != nil {
			return nil, err
		}
		return &docSchema{kind: "array", elem: elem}, p.expect("]")
	case strings.HasPrefix(tok, `"`):
		values := []string{strings.Trim(tok, `"`)}
		for p.peek() == "|" {
			p.next()
			v := p.next()
			if !strings.HasPrefix(v, `"`) {
				return nil, fmt.Errorf("got %q in a list of strings", v)
			}
			values = append(values, strings.Trim(v, `"`))
		}
		return &docSchema{kind: "enum", values: values}, nil
	case slices.Contains(baseTypes, tok):
		if tok == "object" {
			tok = "any-object"
		}
		return &docSchema{kind: tok}, nil
	case tok != "" && strings.ToUpper(tok) == tok:
		return &docSchema{kind: "ref", ref: tok}, nil
	default:
		return nil, fmt.Errorf("unknown type %q", tok)
	}
}

func (p *schemaParser) parseObject() (*docSchema, error) {
	s := &docSchema{kind: "object"}
	if p.peek() == "}" {
		p.next()
		return s, nil
	}
	for {
		var f docField
		for {
			name := p.next()
			if !strings.HasPrefix(name, `"`) {
				return nil, fmt.Errorf("got %q, want a field name", name)
			}
			f.names = append(f.names, strings.Trim(name, `"`))
			if p.peek() != "|" {
				break
			}
			p.next()
		}
		if p.peek() == "?" {
			p.next()
			f.optional = true
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		typ, err := p.parseType()
		if err != nil {
			return nil, err
		}
		f.typ = typ
		s.fields = append(s.fields, f)
		switch tok := p.next(); tok {
		case ",":
		case "}":
			return s, nil
		default:
			return nil, fmt.Errorf("got %q in an object, want , or }", tok)
		}
	}
}

// schemaChecker checks documents and records which documented fields it
// has seen, as "document.field.field" paths; below a named definition the
// path starts again at its name ("PRUNE.would_delete"), wherever it is used.
type schemaChecker struct {
	defs map[string]*docSchema
	seen map[string]bool
}

// check decodes doc and returns every way it differs from s.
func (c *schemaChecker) check(name string, s *docSchema, doc []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []string{fmt.Sprintf("%s: not JSON: %v", name, err)}
	}
	if dec.More() {
		return []string{name + ": more than one JSON document"}
	}
	return c.value(name, name, s, v)
}

// value checks v at path (for messages); seenAt is where its fields are
// recorded as seen.
func (c *schemaChecker) value(path, seenAt string, s *docSchema, v any) []string {
	bad := func(want string) []string { return []string{fmt.Sprintf("%s: %s, want %s", path, describe(v), want)} }
	switch s.kind {
	case "ref":
		def := c.defs[s.ref]
		if def == nil {
			return []string{fmt.Sprintf("%s: %s is not defined", path, s.ref)}
		}
		return c.value(path, s.ref, def, v)
	case "object":
		return c.object(path, seenAt, s, v)
	case "any-object":
		if _, ok := v.(map[string]any); !ok {
			return bad("an object")
		}
	case "array":
		elems, ok := v.([]any)
		if !ok {
			return bad("an array")
		}
		var errs []string
		for _, e := range elems {
			errs = append(errs, c.value(path+"[]", seenAt+"[]", s.elem, e)...)
		}
		return errs
	case "string", "time", "enum":
		str, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		if _, err := time.Parse(time.RFC3339Nano, str); s.kind == "time" && err != nil {
			return bad("an RFC 3339 time")
		}
		if s.kind == "enum" && !slices.Contains(s.values, str) {
			return bad(fmt.Sprintf("one of %q", s.values))
		}
	case "int", "number":
		n, ok := v.(json.Number)
		if !ok {
			return bad("a number")
		}
		if _, err := strconv.ParseInt(string(n), 10, 64); s.kind == "int" && err != nil {
			if _, err := strconv.ParseUint(string(n), 10, 64); err != nil {
				return bad("an integer")
			}
		}
	case "bool":
		if _, ok := v.(bool); !ok {
			return bad("true or false")
		}
	default:
		return []string{fmt.Sprintf("%s: unknown schema kind %q", path, s.kind)}
	}
	return nil
}

func (c *schemaChecker) object(path, seenAt string, s *docSchema, v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: %s, want an object", path, describe(v))}
	}
	var errs []string
	documented := map[string]bool{}
	for _, f := range s.fields {
		var present []string
		for _, name := range f.names {
			documented[name] = true
			if _, ok := m[name]; ok {
				present = append(present, name)
				c.seen[seenAt+"."+name] = true
				errs = append(errs, c.value(path+"."+name, seenAt+"."+name, f.typ, m[name])...)
			}
		}
		switch {
		case len(present) == 0 && !f.optional:
			errs = append(errs, fmt.Sprintf("%s: field %s is missing", path, strings.Join(f.names, " or ")))
		case len(present) > 1:
			errs = append(errs, fmt.Sprintf("%s: fields %v are exclusive", path, present))
		}
	}
	for name := range m {
		if !documented[name] {
			errs = append(errs, fmt.Sprintf("%s: field %q is not in docs/cli.md", path, name))
		}
	}
	return errs
}

// fieldPaths lists every field path s documents below path, up to the
// named definitions it uses (their fields are listed under their names).
func (c *schemaChecker) fieldPaths(path string, s *docSchema) []string {
	switch s.kind {
	case "array":
		return c.fieldPaths(path+"[]", s.elem)
	case "object":
		var out []string
		for _, f := range s.fields {
			for _, name := range f.names {
				out = append(out, path+"."+name)
				out = append(out, c.fieldPaths(path+"."+name, f.typ)...)
			}
		}
		return out
	}
	return nil
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", v)
	case json.Number:
		return "number " + string(v)
	case bool:
		return fmt.Sprintf("bool %v", v)
	case []any:
		return "an array"
	default:
		return "an object"
	}
}
