package config

// ProfileKey is one key of a profile entry: what it means and what it
// stands for on the command line. ProfileKeys lists them all; the
// documentation's table of profile keys is checked against it.
type ProfileKey struct {
	// Key is its YAML key, also its name in `profile show -json`.
	Key string
	// As is what it stands for: a flag of backup ("backup -source"), of
	// forget for the retention keys ("forget -keep-last"), or "" when it
	// is the profile's own (store, enabled, the inline Google client).
	As string
	// Extension marks a key that Cloudstic's schema does not have.
	Extension bool
	// CloudDrive marks a key only cloud-drive sources use.
	CloudDrive bool
	// Help says what it is (Markdown, for the documentation).
	Help string
}

// ProfileKeys are the keys of a profile entry, in the order the
// documentation lists them.
var ProfileKeys = []ProfileKey{
	{Key: "source", As: "backup -source", Help: "what to back up: `local:PATH` (read as `-source` is: relative to the working directory, `~/` is `$HOME`), `sftp://[user@]host[:port]/path`, or a cloud drive: `gdrive[-changes][://DRIVE][/PATH]`, `onedrive[-changes][://DRIVE][/PATH]`"},
	{Key: "store", Help: "the store entry it backs up into (absent: `-store` or `CLOUDSTIC_STORE`)"},
	{Key: "tags", As: "backup -tag", Help: "tags of the profile's snapshots"},
	{Key: "excludes", As: "backup -exclude", Help: "exclude patterns, gitignore syntax"},
	{Key: "exclude_file", As: "backup -exclude-file", Help: "a file of exclude patterns"},
	{Key: "ignore_empty", As: "backup -ignore-empty-snapshot", Help: "write no snapshot when nothing changed"},
	{Key: "volume_uuid", As: "backup -volume-uuid", Help: "group the snapshots by this volume UUID"},
	{Key: "enabled", Help: "`false`: `backup -all-profiles` and `ui -all-profiles` leave it out (absent: enabled)"},
	{Key: "keep_last", As: "forget -keep-last", Extension: true, Help: "retention: after each backup, keep the N newest snapshots of the group it recorded"},
	{Key: "keep_hourly", As: "forget -keep-hourly", Extension: true, Help: "retention: keep the newest snapshot of each of the last N hours"},
	{Key: "keep_daily", As: "forget -keep-daily", Extension: true, Help: "retention: keep the newest snapshot of each of the last N days"},
	{Key: "keep_weekly", As: "forget -keep-weekly", Extension: true, Help: "retention: keep the newest snapshot of each of the last N ISO weeks"},
	{Key: "keep_monthly", As: "forget -keep-monthly", Extension: true, Help: "retention: keep the newest snapshot of each of the last N months"},
	{Key: "keep_yearly", As: "forget -keep-yearly", Extension: true, Help: "retention: keep the newest snapshot of each of the last N years"},
	{Key: "prune", As: "forget -prune", Extension: true, Help: "retention: prune after forget"},
	{Key: "auth_ref", As: "backup -auth-ref", CloudDrive: true, Help: "the `auth` entry the cloud drive logs in with (its provider must be the source's)"},
	{Key: "skip_native_files", As: "backup -skip-native-files", CloudDrive: true, Help: "leave out Google Docs, Sheets, Slides and Drawings instead of exporting them"},
	{Key: "google_credentials", As: "backup -google-credentials", CloudDrive: true, Help: "Google OAuth client file"},
	{Key: "google_credentials_ref", As: "backup -google-credentials-ref", CloudDrive: true, Help: "secret reference of the Google OAuth client JSON"},
	{Key: "google_credentials_json", CloudDrive: true, Help: "Google OAuth client JSON inline (a literal secret)"},
	{Key: "google_token_file", As: "backup -google-token-file", CloudDrive: true, Help: "Google token file (0600)"},
	{Key: "google_token_ref", As: "backup -google-token-ref", CloudDrive: true, Help: "secret reference of the Google token"},
	{Key: "onedrive_client_id", As: "backup -onedrive-client-id", CloudDrive: true, Help: "Microsoft application (client) id"},
	{Key: "onedrive_token_file", As: "backup -onedrive-token-file", CloudDrive: true, Help: "OneDrive token file (0600)"},
	{Key: "onedrive_token_ref", As: "backup -onedrive-token-ref", CloudDrive: true, Help: "secret reference of the OneDrive token"},
}
