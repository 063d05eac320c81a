package operation

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/oauth2"

	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/cloud"
	"github.com/cloudstic/cloudstic/internal/source/gdrive"
	"github.com/cloudstic/cloudstic/internal/source/onedrive"
)

// The cloud drive providers, as auth entries name them.
const (
	ProviderGoogle   = cloud.Google
	ProviderOneDrive = cloud.OneDrive
)

// CloudLogin is how a cloud drive source signs in: the provider's OAuth
// client and where its token is kept. The token travels only through
// Load and Save (the front end backs them with a secret reference), so it
// is never in the front end's hands as anything but a string to keep.
type CloudLogin struct {
	// Provider is ProviderGoogle or ProviderOneDrive.
	Provider string
	// ClientID and ClientSecret are the OAuth client (a OneDrive public
	// client has no secret).
	ClientID, ClientSecret string
	// OAuthURL replaces the provider's OAuth base URL ("" for the real
	// one; see cloud.OAuthConfig).
	OAuthURL string
	// ConnectTimeout and ResponseTimeout are the request deadlines (the
	// stores' ones); zero for the defaults.
	ConnectTimeout, ResponseTimeout time.Duration
	// Load reads the saved token; Save keeps a new or refreshed one.
	Load func(ctx context.Context) (string, error)
	Save func(ctx context.Context, token string) error
}

// CloudDrive is a cloud drive source to open.
type CloudDrive struct {
	// Type is gdrive, gdrive-changes, onedrive or onedrive-changes.
	Type string
	// DriveName is a shared drive's (Google) or another drive's
	// (OneDrive) name; "" for the user's own.
	DriveName string
	// APIURL replaces the Drive API's or Graph's base URL ("" for the
	// real one).
	APIURL string
	// SkipNativeFiles leaves Google documents out instead of exporting
	// them.
	SkipNativeFiles bool
	Login           CloudLogin
	// Retried, when set, hears of each request the transport retries.
	Retried func(method, path string, status int, wait time.Duration)
}

func (l CloudLogin) config() (*oauth2.Config, error) {
	return cloud.OAuthConfig(l.Provider, l.ClientID, l.ClientSecret, l.OAuthURL)
}

func (l CloudLogin) deadlines() cloud.Deadlines {
	return cloud.Deadlines{Connect: l.ConnectTimeout, Response: l.ResponseTimeout}
}

func (l CloudLogin) save(ctx context.Context, tok *oauth2.Token) error {
	s, err := cloud.EncodeToken(tok)
	if err != nil {
		return err
	}
	return l.Save(ctx, s)
}

// OpenCloudDrive signs in with the saved token and returns the drive's
// source; Root resolves its folder. A refreshed token is saved back.
func OpenCloudDrive(ctx context.Context, d CloudDrive) (source.Source, error) {
	conf, err := d.Login.config()
	if err != nil {
		return nil, err
	}
	saved, err := d.Login.Load(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := cloud.DecodeToken(saved)
	if err != nil {
		return nil, err
	}
	dl := d.Login.deadlines()
	tokens := cloud.NewTokens(conf, cloud.PlainClient(dl), tok, d.Login.save)
	var retried func(*http.Request, int, time.Duration)
	if d.Retried != nil {
		retried = func(r *http.Request, status int, wait time.Duration) { d.Retried(r.Method, r.URL.Path, status, wait) }
	}
	client := cloud.Client(dl, tokens, retried)
	switch d.Login.Provider {
	case ProviderGoogle:
		src, err := gdrive.New(ctx, gdrive.Config{Type: d.Type, DriveName: d.DriveName, HTTP: client,
			Endpoint: d.APIURL, SkipNativeFiles: d.SkipNativeFiles})
		if err != nil {
			return nil, err
		}
		return src, nil
	case ProviderOneDrive:
		return onedrive.New(onedrive.Config{Type: d.Type, DriveName: d.DriveName, HTTP: client, Endpoint: d.APIURL}), nil
	}
	return nil, fmt.Errorf("unknown cloud provider %q", d.Login.Provider)
}

// CloudSignIn runs the provider's OAuth flow and saves the token: with
// device, the device-code flow (show gets the URL to open and the code to
// enter); else the browser flow with a loopback redirect and PKCE (show
// gets the authorization URL, code "").
func CloudSignIn(ctx context.Context, l CloudLogin, device bool, show func(url, code string)) error {
	conf, err := l.config()
	if err != nil {
		return err
	}
	plain := cloud.PlainClient(l.deadlines())
	var tok *oauth2.Token
	if device {
		tok, err = cloud.DeviceLogin(ctx, conf, plain, show)
	} else {
		tok, err = cloud.BrowserLogin(ctx, conf, plain, func(u string) { show(u, "") })
	}
	if err != nil {
		return err
	}
	return l.save(ctx, tok)
}

// CloudAccount opens d's root with the saved token and returns the
// account the drive belongs to.
func CloudAccount(ctx context.Context, d CloudDrive) (string, error) {
	src, err := OpenCloudDrive(ctx, d)
	if err != nil {
		return "", err
	}
	defer src.Close() //nolint:errcheck // read-only
	if _, err := src.Root(ctx, "/"); err != nil {
		return "", err
	}
	drv, ok := src.(source.Drive)
	if !ok {
		return "", errors.New("not a cloud drive")
	}
	return drv.Identity().Account, nil
}
