package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// ErrNoToken means there is no saved token: the user must log in.
var ErrNoToken = errors.New("not logged in")

// Tokens is the oauth2.TokenSource of a drive's client: it refreshes the
// access token through Config (golang.org/x/oauth2) when it expires or
// when Invalidate says the service refused it, and hands every new token
// to Save (a secret reference), as refresh tokens may rotate.
type Tokens struct {
	conf   *oauth2.Config
	client *http.Client // for the token endpoint
	save   func(context.Context, *oauth2.Token) error

	mu  sync.Mutex
	tok *oauth2.Token
}

// NewTokens returns a token source starting from tok, refreshed through
// conf with client (nil: http.DefaultClient) and saved with save.
func NewTokens(conf *oauth2.Config, client *http.Client, tok *oauth2.Token, save func(context.Context, *oauth2.Token) error) *Tokens {
	return &Tokens{conf: conf, client: client, tok: tok, save: save}
}

// Token returns a valid access token, refreshing it when needed.
func (t *Tokens) Token() (*oauth2.Token, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok.Valid() {
		return t.tok, nil
	}
	if t.tok.RefreshToken == "" {
		return nil, fmt.Errorf("%w: the saved token has no refresh token", ErrNoToken)
	}
	ctx := context.Background()
	if t.client != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, t.client)
	}
	expired := *t.tok
	expired.Expiry = time.Unix(1, 0) // make the source refresh, whatever the clock says
	tok, err := t.conf.TokenSource(ctx, &expired).Token()
	if err != nil {
		return nil, fmt.Errorf("refreshing the access token (log in again with 'cloudstic auth login'): %w", err)
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = t.tok.RefreshToken
	}
	t.tok = tok
	if t.save != nil {
		if err := t.save(ctx, tok); err != nil {
			return nil, fmt.Errorf("saving the refreshed token: %w", err)
		}
	}
	return tok, nil
}

// Invalidate makes the next Token refresh (the service answered 401).
func (t *Tokens) Invalidate() {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := *t.tok
	c.AccessToken = ""
	t.tok = &c
}

// EncodeToken serialises a token for a secret reference.
func EncodeToken(tok *oauth2.Token) (string, error) {
	b, err := json.Marshal(tok)
	return string(b), err
}

// DecodeToken parses a token saved with EncodeToken (the JSON oauth2's
// Token marshals to).
func DecodeToken(s string) (*oauth2.Token, error) {
	var tok oauth2.Token
	if err := json.Unmarshal([]byte(s), &tok); err != nil {
		return nil, fmt.Errorf("saved token: %w", err)
	}
	if tok.AccessToken == "" && tok.RefreshToken == "" {
		return nil, fmt.Errorf("%w: the saved token is empty", ErrNoToken)
	}
	return &tok, nil
}

// Client is an HTTP client for a drive's API: deadlines, retries, the
// access token of tokens, and one refresh on a 401.
func Client(d Deadlines, tokens *Tokens, retried func(*http.Request, int, time.Duration)) *http.Client {
	base := NewTransport(d)
	return &http.Client{Transport: &Retry{
		Base:    &oauth2.Transport{Source: tokens, Base: base},
		Refresh: tokens.Invalidate,
		Retried: retried,
	}}
}

// PlainClient is an HTTP client with deadlines and retries and no token:
// for the OAuth endpoints.
func PlainClient(d Deadlines) *http.Client {
	return &http.Client{Transport: &Retry{Base: NewTransport(d)}}
}
