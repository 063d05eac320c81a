package cloud_test

import (
	"context"
	"testing"

	"github.com/cloudstic/cloudstic/internal/source/cloud"
	"github.com/cloudstic/cloudstic/internal/source/sourcetest"
)

// TestLogins: both login flows get a token with a refresh token from the
// fake's OAuth server, for both providers: the browser flow through the
// loopback redirect (the fake checks the PKCE verifier against the
// challenge), the device flow by polling until approval.
func TestLogins(t *testing.T) {
	t.Parallel()
	c := sourcetest.NewTenant(t)
	plain := cloud.PlainClient(cloud.Deadlines{})
	for _, provider := range []string{cloud.Google, cloud.OneDrive} {
		conf, err := cloud.OAuthConfig(provider, c.Tenant.Name, "secret", c.OAuthURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Run(provider+"/browser", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opened := make(chan error, 1)
			tok, err := cloud.BrowserLogin(ctx, conf, plain, func(u string) {
				go func() { opened <- cloud.CallbackURL(ctx, u) }()
			})
			if err != nil || tok.RefreshToken == "" {
				t.Fatalf("browser login: %+v, %v", tok, err)
			}
			if err := <-opened; err != nil {
				t.Fatal(err)
			}
		})
		t.Run(provider+"/device", func(t *testing.T) {
			shown := false
			tok, err := cloud.DeviceLogin(context.Background(), conf, plain, func(uri, code string) { shown = uri != "" && code != "" })
			if err != nil || tok.RefreshToken == "" || !shown {
				t.Fatalf("device login: %+v, %v (shown %v)", tok, err, shown)
			}
		})
	}
}
