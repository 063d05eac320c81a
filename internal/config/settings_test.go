package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestStoreSettingsCoverStore: every field of a store entry is one
// setting's plain value or reference, once, under its own YAML key, and
// every flag is named once.
func TestStoreSettingsCoverStore(t *testing.T) {
	t.Parallel()
	keys := map[string]int{}
	flags := map[string]bool{}
	var s Store
	for _, set := range StoreSettings {
		if flags[set.Flag] || set.Flag == "" {
			t.Errorf("flag %q empty or named twice", set.Flag)
		}
		flags[set.Flag] = true
		if v := set.Value(&s); v != nil {
			keys[set.Key]++
			*v = "value of " + set.Key
		} else if set.Key != "" {
			t.Errorf("%s: a key without a field", set.Key)
		}
		if r := set.Ref(&s); r != nil {
			keys[set.RefKey]++
			*r = "ref of " + set.RefKey
		} else if set.RefKey != "" {
			t.Errorf("%s: a reference key without a field", set.RefKey)
		}
		if set.Key == "" && set.RefKey == "" {
			t.Errorf("flag %s: neither a key nor a reference key", set.Flag)
		}
	}
	rt := reflect.TypeFor[Store]()
	v := reflect.ValueOf(s)
	for i := range rt.NumField() {
		key, _, _ := strings.Cut(rt.Field(i).Tag.Get("yaml"), ",")
		if json, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); json != key {
			t.Errorf("field %s: JSON name %q, YAML key %q", rt.Field(i).Name, json, key)
		}
		if keys[key] != 1 {
			t.Errorf("YAML key %s is in %d settings, want 1", key, keys[key])
			continue
		}
		if got := v.Field(i).String(); !strings.HasSuffix(got, " of "+key) {
			t.Errorf("the setting of %s sets field %s to %q", key, rt.Field(i).Name, got)
		}
	}
}

// TestProfileJSONNames: profiles and auth entries print under their YAML
// keys in JSON too.
func TestProfileJSONNames(t *testing.T) {
	t.Parallel()
	for _, rt := range []reflect.Type{reflect.TypeFor[Profile](), reflect.TypeFor[Auth]()} {
		for i := range rt.NumField() {
			key, opt, _ := strings.Cut(rt.Field(i).Tag.Get("yaml"), ",")
			if got := rt.Field(i).Tag.Get("json"); got != key && got != key+","+opt {
				t.Errorf("%s.%s: JSON tag %q, YAML key %q", rt.Name(), rt.Field(i).Name, got, key)
			}
		}
	}
}

// TestProfileKeysCoverProfile: every key of a profile entry is listed
// once in ProfileKeys, and nothing else is.
func TestProfileKeysCoverProfile(t *testing.T) {
	t.Parallel()
	listed := map[string]int{}
	for _, k := range ProfileKeys {
		listed[k.Key]++
	}
	keys := yamlKeys(reflect.TypeFor[Profile]())
	for k := range keys {
		if listed[k] != 1 {
			t.Errorf("profile key %s is listed %d times in ProfileKeys, want 1", k, listed[k])
		}
	}
	for k := range listed {
		if !keys[k] {
			t.Errorf("ProfileKeys lists %s, which a profile entry does not have", k)
		}
	}
}
