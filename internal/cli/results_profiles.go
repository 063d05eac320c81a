package cli

import (
	"github.com/cloudstic/cloudstic/internal/config"
)

// The -json documents of profile, store and backup -profile, as
// docs/cli.md's "JSON output" section publishes them. Fields are in the
// alphabetical order of their JSON names, the order these documents had
// when they were built as maps, so the bytes did not change.

// profileListEntry is one entry of profile list -json.
type profileListEntry struct {
	Enabled bool   `json:"enabled"`
	Name    string `json:"name"`
	Source  string `json:"source"`
	Store   string `json:"store"`
}

// profileShowResult is profile show -json.
type profileShowResult struct {
	Enabled bool           `json:"enabled"`
	Name    string         `json:"name"`
	Profile config.Profile `json:"profile"`
}

// profileNewResult is profile new -json.
type profileNewResult struct {
	Created string         `json:"created"`
	File    string         `json:"file"`
	Profile config.Profile `json:"profile"`
}

// storeListEntry is one entry of store list -json.
type storeListEntry struct {
	Name string `json:"name"`
	URI  string `json:"uri"`
}

// storeShowResult is store show -json: the store's settings (see
// storeFields) and the profiles that use it.
type storeShowResult struct {
	Name     string            `json:"name"`
	Profiles []string          `json:"profiles"`
	Store    map[string]string `json:"store"`
}

// storeNewResult is store new -json.
type storeNewResult struct {
	Created string            `json:"created"`
	File    string            `json:"file"`
	Store   map[string]string `json:"store"`
}

// storeVerifyResult is store verify -json.
type storeVerifyResult struct {
	Encrypted  bool   `json:"encrypted"`
	OK         bool   `json:"ok"`
	Repository string `json:"repository"`
	Store      string `json:"store"`
	URI        string `json:"uri"`
}

// profileBackupResult is backup -profile -json for a profile with a
// retention policy: the backup's document (backupResult, or errorResult
// when it failed), then forget's (forgetResult, or errorResult) when the
// policy was applied or failed.
type profileBackupResult struct {
	Backup   any    `json:"backup"`
	ExitCode int    `json:"exit_code"`
	Forget   any    `json:"forget,omitempty"`
	Profile  string `json:"profile"`
}
