package cli

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// errPlist marks a property list this reader cannot read.
var errPlist = errors.New("malformed property list")

// parsePlist reads an XML property list whose top element is a dict, as
// plutil does: dict, array, string, integer, true and false. It serves
// schedule list, which shows the times of the jobs it wrote, and the tests
// of what install writes.
func parsePlist(data []byte) (map[string]any, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errPlist, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "plist" {
				return nil, fmt.Errorf("%w: top element <%s>, want <plist>", errPlist, se.Name.Local)
			}
			v, err := plistValue(d, nil)
			if err != nil {
				return nil, err
			}
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%w: the plist holds no dict", errPlist)
			}
			return m, nil
		}
	}
}

// plistValue reads the next value element; start is its start element
// when already read.
func plistValue(d *xml.Decoder, start *xml.StartElement) (any, error) {
	for start == nil {
		tok, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errPlist, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			start = &se
		}
	}
	switch start.Name.Local {
	case "string", "integer", "key":
		var s string
		if err := d.DecodeElement(&s, start); err != nil {
			return nil, fmt.Errorf("%w: %w", errPlist, err)
		}
		if start.Name.Local == "integer" {
			i, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return nil, fmt.Errorf("%w: integer %q", errPlist, s)
			}
			return i, nil
		}
		return s, nil
	case "true", "false":
		if err := d.Skip(); err != nil {
			return nil, fmt.Errorf("%w: %w", errPlist, err)
		}
		return start.Name.Local == "true", nil
	case "array", "dict":
		return plistContainer(d, start.Name.Local)
	}
	return nil, fmt.Errorf("%w: element <%s>", errPlist, start.Name.Local)
}

// plistContainer reads the elements of an array or a dict up to its end.
func plistContainer(d *xml.Decoder, kind string) (any, error) {
	arr, dict := []any{}, map[string]any{}
	key := ""
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: unterminated <%s>: %w", errPlist, kind, err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if kind == "array" {
				return arr, nil
			}
			if key != "" {
				return nil, fmt.Errorf("%w: key %q without a value", errPlist, key)
			}
			return dict, nil
		case xml.StartElement:
			if kind == "dict" && key == "" {
				if t.Name.Local != "key" {
					return nil, fmt.Errorf("%w: <%s> where a dict wants a <key>", errPlist, t.Name.Local)
				}
				var k string
				if err := d.DecodeElement(&k, &t); err != nil {
					return nil, fmt.Errorf("%w: %w", errPlist, err)
				}
				key = k
				continue
			}
			v, err := plistValue(d, &t)
			if err != nil {
				return nil, err
			}
			if kind == "array" {
				arr = append(arr, v)
			} else {
				dict[key], key = v, ""
			}
		}
	}
}

// calendarString shows a StartCalendarInterval dict: "Hour=2 Minute=30".
func calendarString(cal map[string]any) string {
	keys := make([]string, 0, len(cal))
	for k := range cal {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, cal[k]))
	}
	return strings.Join(parts, " ")
}
