package cloud

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// FuzzDecodeToken: a saved token, whatever its bytes, decodes to a token
// with an access or refresh token, or to an error; a decoded one encodes
// and decodes again to the same token.
func FuzzDecodeToken(f *testing.F) {
	good, err := EncodeToken(&oauth2.Token{AccessToken: "at", RefreshToken: "rt", TokenType: "Bearer",
		Expiry: time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC)})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{good, `{}`, `{"refresh_token":"r"}`, `{"access_token":1}`, `null`, ``, `[`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := DecodeToken(s)
		if err != nil {
			if tok != nil {
				t.Fatal("a token with an error")
			}
			return
		}
		if tok.AccessToken == "" && tok.RefreshToken == "" {
			t.Fatal("an empty token decoded without an error")
		}
		again, err := EncodeToken(tok)
		if err != nil {
			t.Fatal(err)
		}
		tok2, err := DecodeToken(again)
		if err != nil || tok2.AccessToken != tok.AccessToken || tok2.RefreshToken != tok.RefreshToken || !tok2.Expiry.Equal(tok.Expiry) {
			t.Fatalf("round trip: %+v, %v; want %+v", tok2, err, tok)
		}
	})
}

func TestDecodeTokenEmpty(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`{}`, `{"token_type":"Bearer"}`} {
		if _, err := DecodeToken(s); !errors.Is(err, ErrNoToken) {
			t.Errorf("DecodeToken(%s): %v, want ErrNoToken", s, err)
		}
	}
}
