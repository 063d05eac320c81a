package config

import (
	"fmt"
	"slices"
	"strings"
)

// LiteralSecrets lists, as dotted keys in order, the fields of the file
// that hold a secret itself rather than a reference to one: the store
// settings StoreSettings marks secret (the S3 secret key, the B2
// application key, the SFTP password), and inline Google credentials.
// (Key ids and file paths are not secrets.)
func (f *File) LiteralSecrets() []string {
	var out []string
	add := func(key, value string) {
		if value != "" {
			out = append(out, key)
		}
	}
	for name, s := range f.Stores {
		for _, t := range StoreSettings {
			if v := t.Value(&s); v != nil && t.Secret {
				add("stores."+name+"."+t.Key, *v)
			}
		}
	}
	for name, a := range f.Auth {
		add("auth."+name+".google_credentials_json", a.GoogleCredsJSON)
	}
	for name, p := range f.Profiles {
		add("profiles."+name+".google_credentials_json", p.GoogleCredsJSON)
	}
	slices.Sort(out)
	return out
}

// Exposure says in one line what users other than the file's owner can do
// with it, when that matters, and "" otherwise: read the literal secrets
// it holds (a file of only references exposes nothing by being read), or
// change it (and with it where the backups go). It judges the mode Load
// saw; on Windows, where access is a matter of ACLs, it says nothing.
func (f *File) Exposure() string {
	open := othersMayAccess(f.Mode)
	var what []string
	if open&0o044 != 0 {
		if secrets := f.LiteralSecrets(); len(secrets) > 0 {
			what = append(what, fmt.Sprintf("read the literal secrets in %s", strings.Join(secrets, ", ")))
		}
	}
	if open&0o022 != 0 {
		what = append(what, "change it, and with it where your backups go and which password opens them")
	}
	if len(what) == 0 {
		return ""
	}
	return fmt.Sprintf("%s (mode %04o): other users of this machine can %s; run chmod 600 %s, and keep secrets in the *_secret fields as references (env://, file://, config-token://, secret-service://)",
		f.Path, f.Mode.Perm(), strings.Join(what, ", and "), f.Path)
}
