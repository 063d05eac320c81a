package config

// Store is one entry of the stores map: where a repository is and how to
// reach and unlock it. Plain credential fields are Cloudstic's; the
// *_secret fields hold secret references (see Resolver).
type Store struct {
	URI                     string `yaml:"uri" json:"uri"`
	S3Endpoint              string `yaml:"s3_endpoint,omitempty" json:"s3_endpoint,omitempty"`
	S3Region                string `yaml:"s3_region,omitempty" json:"s3_region,omitempty"`
	S3Profile               string `yaml:"s3_profile,omitempty" json:"s3_profile,omitempty"`
	S3AccessKey             string `yaml:"s3_access_key,omitempty" json:"s3_access_key,omitempty"`
	S3SecretKey             string `yaml:"s3_secret_key,omitempty" json:"s3_secret_key,omitempty"`
	B2KeyID                 string `yaml:"b2_key_id,omitempty" json:"b2_key_id,omitempty"`
	B2AppKey                string `yaml:"b2_app_key,omitempty" json:"b2_app_key,omitempty"`
	StoreSFTPPassword       string `yaml:"store_sftp_password,omitempty" json:"store_sftp_password,omitempty"`
	StoreSFTPKey            string `yaml:"store_sftp_key,omitempty" json:"store_sftp_key,omitempty"`
	PasswordSecret          string `yaml:"password_secret,omitempty" json:"password_secret,omitempty"`
	EncryptionKeySecret     string `yaml:"encryption_key_secret,omitempty" json:"encryption_key_secret,omitempty"`
	RecoveryKeySecret       string `yaml:"recovery_key_secret,omitempty" json:"recovery_key_secret,omitempty"`
	S3AccessKeySecret       string `yaml:"s3_access_key_secret,omitempty" json:"s3_access_key_secret,omitempty"`
	S3SecretKeySecret       string `yaml:"s3_secret_key_secret,omitempty" json:"s3_secret_key_secret,omitempty"`
	B2KeyIDSecret           string `yaml:"b2_key_id_secret,omitempty" json:"b2_key_id_secret,omitempty"`
	B2AppKeySecret          string `yaml:"b2_app_key_secret,omitempty" json:"b2_app_key_secret,omitempty"`
	StoreSFTPPasswordSecret string `yaml:"store_sftp_password_secret,omitempty" json:"store_sftp_password_secret,omitempty"`
	StoreSFTPKeySecret      string `yaml:"store_sftp_key_secret,omitempty" json:"store_sftp_key_secret,omitempty"`
	KMSKeyARN               string `yaml:"kms_key_arn,omitempty" json:"kms_key_arn,omitempty"`
	KMSRegion               string `yaml:"kms_region,omitempty" json:"kms_region,omitempty"`
	KMSEndpoint             string `yaml:"kms_endpoint,omitempty" json:"kms_endpoint,omitempty"`

	// StoreSFTPKnownHosts is an extension (not in Cloudstic's schema): the
	// known_hosts file that pins the SFTP server's host key.
	StoreSFTPKnownHosts string `yaml:"store_sftp_known_hosts,omitempty" json:"store_sftp_known_hosts,omitempty"`
}

// Profile is one entry of the profiles map: a backup job.
type Profile struct {
	Source      string   `yaml:"source" json:"source"`
	Store       string   `yaml:"store,omitempty" json:"store,omitempty"`
	AuthRef     string   `yaml:"auth_ref,omitempty" json:"auth_ref,omitempty"`
	Tags        []string `yaml:"tags,omitempty" json:"tags,omitempty"`
	Excludes    []string `yaml:"excludes,omitempty" json:"excludes,omitempty"`
	ExcludeFile string   `yaml:"exclude_file,omitempty" json:"exclude_file,omitempty"`
	IgnoreEmpty bool     `yaml:"ignore_empty,omitempty" json:"ignore_empty,omitempty"`
	VolumeUUID  string   `yaml:"volume_uuid,omitempty" json:"volume_uuid,omitempty"`
	Enabled     *bool    `yaml:"enabled,omitempty" json:"enabled,omitempty"`

	// Cloud-drive fields: read and kept, used only by cloud-drive sources,
	// which this program refuses when a profile needing them runs.
	SkipNativeFiles   bool   `yaml:"skip_native_files,omitempty" json:"skip_native_files,omitempty"`
	GoogleCreds       string `yaml:"google_credentials,omitempty" json:"google_credentials,omitempty"`
	GoogleCredsRef    string `yaml:"google_credentials_ref,omitempty" json:"google_credentials_ref,omitempty"`
	GoogleCredsJSON   string `yaml:"google_credentials_json,omitempty" json:"google_credentials_json,omitempty"`
	GoogleTokenFile   string `yaml:"google_token_file,omitempty" json:"google_token_file,omitempty"`
	GoogleTokenRef    string `yaml:"google_token_ref,omitempty" json:"google_token_ref,omitempty"`
	OneDriveClientID  string `yaml:"onedrive_client_id,omitempty" json:"onedrive_client_id,omitempty"`
	OneDriveTokenFile string `yaml:"onedrive_token_file,omitempty" json:"onedrive_token_file,omitempty"`
	OneDriveTokenRef  string `yaml:"onedrive_token_ref,omitempty" json:"onedrive_token_ref,omitempty"`

	// Retention is an extension (not in Cloudstic's schema): after a backup
	// of this profile, forget by this policy (and prune when Prune is set).
	KeepLast    int  `yaml:"keep_last,omitempty" json:"keep_last,omitempty"`
	KeepHourly  int  `yaml:"keep_hourly,omitempty" json:"keep_hourly,omitempty"`
	KeepDaily   int  `yaml:"keep_daily,omitempty" json:"keep_daily,omitempty"`
	KeepWeekly  int  `yaml:"keep_weekly,omitempty" json:"keep_weekly,omitempty"`
	KeepMonthly int  `yaml:"keep_monthly,omitempty" json:"keep_monthly,omitempty"`
	KeepYearly  int  `yaml:"keep_yearly,omitempty" json:"keep_yearly,omitempty"`
	Prune       bool `yaml:"prune,omitempty" json:"prune,omitempty"`
}

// Auth is one entry of the auth map: the OAuth client of a cloud drive and
// where its token is kept (a secret reference or a file, never the token
// itself).
type Auth struct {
	Provider          string `yaml:"provider" json:"provider"`
	GoogleCreds       string `yaml:"google_credentials,omitempty" json:"google_credentials,omitempty"`
	GoogleCredsRef    string `yaml:"google_credentials_ref,omitempty" json:"google_credentials_ref,omitempty"`
	GoogleCredsJSON   string `yaml:"google_credentials_json,omitempty" json:"google_credentials_json,omitempty"`
	GoogleTokenFile   string `yaml:"google_token_file,omitempty" json:"google_token_file,omitempty"`
	GoogleTokenRef    string `yaml:"google_token_ref,omitempty" json:"google_token_ref,omitempty"`
	OneDriveClientID  string `yaml:"onedrive_client_id,omitempty" json:"onedrive_client_id,omitempty"`
	OneDriveTokenFile string `yaml:"onedrive_token_file,omitempty" json:"onedrive_token_file,omitempty"`
	OneDriveTokenRef  string `yaml:"onedrive_token_ref,omitempty" json:"onedrive_token_ref,omitempty"`
}

// IsEnabled reports whether -all-profiles runs the profile (absent means
// enabled).
func (p Profile) IsEnabled() bool { return p.Enabled == nil || *p.Enabled }

// HasRetention reports whether the profile sets a keep_* policy.
func (p Profile) HasRetention() bool {
	return p.KeepLast+p.KeepHourly+p.KeepDaily+p.KeepWeekly+p.KeepMonthly+p.KeepYearly > 0
}

// CloudDrive reports whether the profile backs up a cloud drive (a source
// other than local: and sftp://), which logs in with an auth entry.
func (p Profile) CloudDrive() bool {
	for _, s := range []string{"gdrive", "onedrive"} {
		if p.Source == s || hasPrefix(p.Source, s+":") || hasPrefix(p.Source, s+"-changes") {
			return true
		}
	}
	return p.AuthRef != ""
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// SecretFields lists a store's secret-reference fields by YAML key (see
// StoreSettings), for validation and for `store show`.
func (s Store) SecretFields() map[string]string {
	out := map[string]string{}
	for _, t := range StoreSettings {
		if ref := t.Ref(&s); ref != nil {
			out[t.RefKey] = *ref
		}
	}
	return out
}
