package cloud

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
)

// Providers of cloud drives.
const (
	Google   = "google"
	OneDrive = "onedrive"
)

// Default OAuth base URLs (see OAuthConfig) and scopes.
const (
	GoogleOAuthURL   = "https://oauth2.googleapis.com"
	GoogleAuthURL    = "https://accounts.google.com/o/oauth2/v2/auth"
	OneDriveOAuthURL = "https://login.microsoftonline.com/common/oauth2/v2.0"
	googleScope      = "https://www.googleapis.com/auth/drive.readonly"
)

var oneDriveScopes = []string{"Files.Read.All", "User.Read", "offline_access"}

// OAuthConfig is the OAuth 2 client of provider. base, when set, replaces
// the provider's OAuth URL: Google's endpoints are then base/auth,
// base/token and base/device/code; Microsoft's (a national cloud's
// login host, a tenant other than common) base/authorize, base/token and
// base/devicecode.
func OAuthConfig(provider, clientID, clientSecret, base string) (*oauth2.Config, error) {
	if clientID == "" {
		return nil, fmt.Errorf("%w for %s", ErrNoClient, provider)
	}
	base = strings.TrimSuffix(base, "/")
	c := &oauth2.Config{ClientID: clientID, ClientSecret: clientSecret}
	switch provider {
	case Google:
		c.Scopes = []string{googleScope}
		c.Endpoint = oauth2.Endpoint{AuthURL: GoogleAuthURL, TokenURL: GoogleOAuthURL + "/token", DeviceAuthURL: GoogleOAuthURL + "/device/code"}
		if base != "" {
			c.Endpoint = oauth2.Endpoint{AuthURL: base + "/auth", TokenURL: base + "/token", DeviceAuthURL: base + "/device/code"}
		}
	case OneDrive:
		c.Scopes = oneDriveScopes
		if base == "" {
			base = OneDriveOAuthURL
		}
		c.Endpoint = oauth2.Endpoint{AuthURL: base + "/authorize", TokenURL: base + "/token", DeviceAuthURL: base + "/devicecode"}
	default:
		return nil, fmt.Errorf("unknown provider %q (want google or onedrive)", provider)
	}
	c.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	return c, nil
}

// ErrNoClient means no OAuth client id was given.
var ErrNoClient = errors.New("no OAuth client id")

// DeviceLogin runs the device-code flow: show tells the user where to go
// and which code to enter; the token comes once they approved.
func DeviceLogin(ctx context.Context, conf *oauth2.Config, client *http.Client, show func(verificationURI, userCode string)) (*oauth2.Token, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, client)
	da, err := conf.DeviceAuth(ctx)
	if err != nil {
		return nil, fmt.Errorf("device authorization: %w", err)
	}
	uri := da.VerificationURIComplete
	if uri == "" {
		uri = da.VerificationURI
	}
	show(uri, da.UserCode)
	tok, err := conf.DeviceAccessToken(ctx, da)
	if err != nil {
		return nil, fmt.Errorf("device login: %w", err)
	}
	return tok, nil
}

// BrowserLogin runs the authorization-code flow with PKCE and a loopback
// redirect: it listens on 127.0.0.1 (a free port), has open show the
// user the authorization URL (and try to open a browser on it), and waits
// for the redirect carrying the code, which it exchanges for a token.
func BrowserLogin(ctx context.Context, conf *oauth2.Config, client *http.Client, open func(authURL string)) (*oauth2.Token, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer ln.Close() //nolint:errcheck // the server is done with it
	c := *conf
	c.RedirectURL = "http://" + ln.Addr().String() + "/callback"
	verifier, state := oauth2.GenerateVerifier(), oauth2.GenerateVerifier()
	type result struct {
		code string
		err  error
	}
	got := make(chan result, 1)
	srv := &http.Server{ReadHeaderTimeout: DefaultMaxWait, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/callback" || q.Get("state") != state {
			http.Error(w, "not the login this program is waiting for", http.StatusBadRequest)
			return
		}
		res := result{code: q.Get("code")}
		if e := q.Get("error"); e != "" || res.code == "" {
			res.err = fmt.Errorf("authorization refused: %s %s", e, q.Get("error_description"))
		}
		select {
		case got <- res:
		default:
		}
		_, _ = fmt.Fprintln(w, "Logged in: you may close this window and return to cloudstic.") // the browser's page only
	})}
	go srv.Serve(ln)  //nolint:errcheck // ends with Close below
	defer srv.Close() //nolint:errcheck // done
	open(c.AuthCodeURL(state, oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier)))
	var res result
	select {
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case res = <-got:
	}
	if res.err != nil {
		return nil, res.err
	}
	tok, err := c.Exchange(context.WithValue(ctx, oauth2.HTTPClient, client), res.code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, fmt.Errorf("exchanging the authorization code: %w", err)
	}
	return tok, nil
}

// CallbackURL is a helper of tests: it follows the authorization URL as a
// browser would (the server approves at once) so that the loopback
// redirect is reached.
func CallbackURL(ctx context.Context, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close() // only the redirect mattered
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", redact(authURL), resp.Status)
	}
	return nil
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "authorization URL"
	}
	return p.Scheme + "://" + p.Host + p.Path
}
