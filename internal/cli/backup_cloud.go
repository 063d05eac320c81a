package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/source"
)

// Environment variables of the cloud drives' endpoints (a national cloud,
// a proxy, the test servers).
const (
	envGoogleAPI     = "CLOUDSTIC_GOOGLE_API_URL"
	envGoogleOAuth   = "CLOUDSTIC_GOOGLE_OAUTH_URL"
	envOneDriveAPI   = "CLOUDSTIC_ONEDRIVE_API_URL"
	envOneDriveOAuth = "CLOUDSTIC_ONEDRIVE_OAUTH_URL"
)

// cloudFlags are backup's flags of the cloud-drive sources (Cloudstic's
// names): the auth entry and the credentials it would hold.
type cloudFlags struct {
	authRef                                               string
	googleCreds, googleCredsRef                           string
	googleTokenFile, googleTokenRef                       string
	onedriveClientID, onedriveTokenFile, onedriveTokenRef string
	skipNative                                            bool
	// credsJSON is an auth entry's or profile's inline Google client.
	credsJSON string
}

func (f *cloudFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&f.authRef, "auth-ref", "", "the auth entry of profiles.yaml with the OAuth client and token of a gdrive or onedrive source (default google-default or onedrive-default)")
	fs.StringVar(&f.googleCreds, "google-credentials", getenv("GOOGLE_APPLICATION_CREDENTIALS"), "Google OAuth client file (JSON downloaded from the Google Cloud console; env GOOGLE_APPLICATION_CREDENTIALS)")
	fs.StringVar(&f.googleCredsRef, "google-credentials-ref", "", "secret reference holding the Google OAuth client JSON")
	fs.StringVar(&f.googleTokenFile, "google-token-file", getenv("GOOGLE_TOKEN_FILE"), "file holding the Google token, mode 0600 (env GOOGLE_TOKEN_FILE)")
	fs.StringVar(&f.googleTokenRef, "google-token-ref", "", "secret reference holding the Google token")
	fs.StringVar(&f.onedriveClientID, "onedrive-client-id", getenv("ONEDRIVE_CLIENT_ID"), "Microsoft application (client) id (env ONEDRIVE_CLIENT_ID)")
	fs.StringVar(&f.onedriveTokenFile, "onedrive-token-file", getenv("ONEDRIVE_TOKEN_FILE"), "file holding the OneDrive token, mode 0600 (env ONEDRIVE_TOKEN_FILE)")
	fs.StringVar(&f.onedriveTokenRef, "onedrive-token-ref", "", "secret reference holding the OneDrive token")
	fs.BoolVar(&f.skipNative, "skip-native-files", false, "leave Google Docs, Sheets, Slides and Drawings out instead of exporting them")
}

// applyAuth fills what the flags left empty from an auth entry.
func (f *cloudFlags) applyAuth(e config.Auth, explicit map[string]bool) {
	set := func(flagName string, dst *string, v string) {
		if !explicit[flagName] && v != "" {
			*dst = v
		}
	}
	set("google-credentials", &f.googleCreds, e.GoogleCreds)
	set("google-credentials-ref", &f.googleCredsRef, e.GoogleCredsRef)
	set("google-token-file", &f.googleTokenFile, e.GoogleTokenFile)
	set("google-token-ref", &f.googleTokenRef, e.GoogleTokenRef)
	set("onedrive-client-id", &f.onedriveClientID, e.OneDriveClientID)
	set("onedrive-token-file", &f.onedriveTokenFile, e.OneDriveTokenFile)
	set("onedrive-token-ref", &f.onedriveTokenRef, e.OneDriveTokenRef)
	if f.credsJSON == "" {
		f.credsJSON = e.GoogleCredsJSON
	}
}

// cloudURI is a parsed gdrive[-changes] or onedrive[-changes] source.
type cloudURI struct {
	typ, provider string
	drive         string // a shared drive's name; "" for the user's own
	path          string // the folder below the drive's root
}

// parseCloudURI reads TYPE, TYPE:/PATH or TYPE://DRIVE NAME[/PATH]; ok is
// false for a URI of another kind of source.
func parseCloudURI(uri string) (cloudURI, bool, error) {
	typ, rest, _ := strings.Cut(uri, ":")
	var u cloudURI
	switch typ {
	case "gdrive", "gdrive-changes":
		u.provider = operation.ProviderGoogle
	case "onedrive", "onedrive-changes":
		u.provider = operation.ProviderOneDrive
	default:
		return u, false, nil
	}
	u.typ = typ
	if drive, ok := strings.CutPrefix(rest, "//"); ok {
		u.drive, u.path, _ = strings.Cut(drive, "/")
		if u.drive == "" {
			return u, true, usageErr("-source %q: want %s://DRIVE NAME[/PATH] (or %s:/PATH for your own drive)", uri, typ, typ)
		}
	} else {
		u.path = rest
	}
	u.path = "/" + strings.Trim(u.path, "/")
	return u, true, nil
}

// String is the URI as snapshots record it: TYPE:/PATH or
// TYPE://DRIVE NAME[/PATH] (the sources' own form, which forget -source
// is compared with).
func (u cloudURI) String() string {
	rel := strings.TrimPrefix(u.path, "/")
	if u.drive != "" {
		return strings.TrimSuffix(u.typ+"://"+u.drive+"/"+rel, "/")
	}
	return u.typ + ":/" + rel
}

// cloudAuth is what a cloud source logs in with.
type cloudAuth struct {
	name     string // the auth entry's name, for messages
	provider string
	tokenRef string
	login    operation.CloudLogin
}

// cloudAuthOf resolves a provider's auth: the flags, then the auth entry
// (-auth-ref, else PROVIDER-default when profiles.yaml has one).
func (a *app) cloudAuthOf(provider string, f *cloudFlags) (cloudAuth, error) {
	name := f.authRef
	if name == "" {
		name = provider + "-default"
	}
	file, err := a.loadProfilesOrEmpty()
	if err != nil {
		return cloudAuth{}, err
	}
	e, ok := file.Auth[name]
	switch {
	case !ok && f.authRef != "":
		return cloudAuth{}, fmt.Errorf("no auth entry %q in %s: create it with 'cloudstic auth new -name %s -provider %s', then 'cloudstic auth login %s'",
			name, file.Path, name, provider, name)
	case ok && e.Provider != provider:
		return cloudAuth{}, usageErr("auth entry %q is for %s, not %s", name, e.Provider, provider)
	case ok:
		f.applyAuth(e, a.explicit)
	}
	auth := cloudAuth{name: name, provider: provider}
	var clientID, secret string
	if provider == operation.ProviderGoogle {
		auth.tokenRef = tokenRef(f.googleTokenRef, f.googleTokenFile)
		clientID, secret, err = a.googleClient(f)
	} else {
		auth.tokenRef = tokenRef(f.onedriveTokenRef, f.onedriveTokenFile)
		clientID = f.onedriveClientID
	}
	if err != nil {
		return cloudAuth{}, err
	}
	if ok && clientID == "" {
		what := "-google-credentials FILE (the OAuth client JSON of the Google Cloud console; env GOOGLE_APPLICATION_CREDENTIALS)"
		if provider == operation.ProviderOneDrive {
			what = "-onedrive-client-id ID (the application id of an app registration at Microsoft; env ONEDRIVE_CLIENT_ID)"
		}
		return cloudAuth{}, usageErr("auth entry %q names no OAuth client: give %s; see docs/sources.md", name, what)
	}
	if auth.tokenRef == "" || clientID == "" {
		return cloudAuth{}, fmt.Errorf("no %s login: create an auth entry with 'cloudstic auth new -name %s -provider %s' and log in with 'cloudstic auth login %s' (see docs/sources.md)",
			provider, name, provider, name)
	}
	auth.login = operation.CloudLogin{Provider: provider, ClientID: clientID, ClientSecret: secret, OAuthURL: a.oauthURL(provider),
		ConnectTimeout: a.g.timeouts.connect, ResponseTimeout: a.g.timeouts.response,
		Load: func(ctx context.Context) (string, error) { return a.loadToken(ctx, auth) },
		Save: func(ctx context.Context, tok string) error {
			if err := a.resolver().Store(ctx, auth.tokenRef, tok); err != nil {
				return fmt.Errorf("saving the token at %s: %w", auth.tokenRef, err)
			}
			return nil
		}}
	return auth, nil
}

// tokenRef is where a token is kept: a secret reference, else a file.
func tokenRef(ref, file string) string {
	if ref != "" {
		return ref
	}
	if file == "" {
		return ""
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	return "file://" + filepath.ToSlash(abs)
}

// googleClient reads the Google OAuth client (its id and secret) from
// the credentials file, reference or inline JSON.
func (a *app) googleClient(f *cloudFlags) (id, secret string, err error) {
	var raw []byte
	switch {
	case f.googleCredsRef != "":
		s, err := a.resolver().Resolve(context.Background(), f.googleCredsRef)
		if err != nil {
			return "", "", err
		}
		raw = []byte(s)
	case f.googleCreds != "":
		if raw, err = os.ReadFile(f.googleCreds); err != nil {
			return "", "", fmt.Errorf("google credentials: %w", err)
		}
	case f.credsJSON != "":
		raw = []byte(f.credsJSON)
	default:
		return "", "", nil
	}
	var c map[string]struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", "", fmt.Errorf("google credentials: %w (want the OAuth client JSON of the Google Cloud console)", err)
	}
	for _, kind := range []string{"installed", "web"} {
		if cl, ok := c[kind]; ok && cl.ClientID != "" {
			return cl.ClientID, cl.ClientSecret, nil
		}
	}
	return "", "", errors.New("google credentials: no \"installed\" or \"web\" OAuth client in the JSON (a service account key is not an OAuth client)")
}

// oauthURL is the OAuth base URL a provider's environment variable sets.
func (a *app) oauthURL(provider string) string {
	if provider == operation.ProviderGoogle {
		return a.io.Getenv(envGoogleOAuth)
	}
	return a.io.Getenv(envOneDriveOAuth)
}

// loadToken reads the saved token of auth (its text, for
// operation.CloudLogin.Load).
func (a *app) loadToken(ctx context.Context, auth cloudAuth) (string, error) {
	s, err := a.resolver().Resolve(ctx, auth.tokenRef)
	if errors.Is(err, config.ErrSecretNotFound) {
		return "", fmt.Errorf("not logged in to %s (no token at %s): run 'cloudstic auth login %s'", auth.provider, auth.tokenRef, auth.name)
	}
	return s, err
}

// cloudDrive resolves the login of u and says what to open.
func (a *app) cloudDrive(u cloudURI, f *cloudFlags) (operation.CloudDrive, error) {
	auth, err := a.cloudAuthOf(u.provider, f)
	if err != nil {
		return operation.CloudDrive{}, err
	}
	d := operation.CloudDrive{Type: u.typ, DriveName: u.drive, SkipNativeFiles: f.skipNative, Login: auth.login,
		APIURL: a.io.Getenv(envGoogleAPI)}
	if u.provider == operation.ProviderOneDrive {
		d.APIURL = a.io.Getenv(envOneDriveAPI)
	}
	if a.g.verbose {
		d.Retried = func(method, path string, status int, wait time.Duration) {
			a.infof("%s %s: status %d, retrying in %s", method, path, status, wait.Round(time.Millisecond))
		}
	}
	return d, nil
}

// openCloudSource logs in to a cloud drive and returns its source.
func (a *app) openCloudSource(ctx context.Context, u cloudURI, f *cloudFlags) (source.Source, error) {
	d, err := a.cloudDrive(u, f)
	if err != nil {
		return nil, err
	}
	return operation.OpenCloudDrive(ctx, d)
}
