package gdrive_test

import (
	"context"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/cloud"
	"github.com/cloudstic/cloudstic/internal/source/gdrive"
	"github.com/cloudstic/cloudstic/internal/source/sourcetest"
	"github.com/cloudstic/cloudstic/test/fakecloud"
)

// fakeSource opens a gdrive-changes source on the fake, through the
// official client and oauth2's token refresh.
func fakeSource(t *testing.T, c *fakecloud.Client) source.Source {
	t.Helper()
	conf, err := cloud.OAuthConfig(cloud.Google, c.Tenant.Name, "", c.OAuthURL())
	if err != nil {
		t.Fatal(err)
	}
	tok := &oauth2.Token{AccessToken: c.Tenant.AccessToken, RefreshToken: c.Tenant.RefreshToken, Expiry: time.Now().Add(time.Hour)}
	tokens := cloud.NewTokens(conf, cloud.PlainClient(cloud.Deadlines{}), tok, nil)
	retry := &cloud.Retry{Base: &oauth2.Transport{Source: tokens, Base: cloud.NewTransport(cloud.Deadlines{})},
		Refresh: tokens.Invalidate, Backoff: time.Millisecond}
	src, err := gdrive.New(context.Background(), gdrive.Config{Type: "gdrive-changes", Endpoint: c.DriveEndpoint(),
		HTTP: httpClient(retry)})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestConformance runs the source suite on the fake Google Drive.
func TestConformance(t *testing.T) {
	t.Parallel()
	sourcetest.Run(t, &sourcetest.FakeDrive{C: sourcetest.NewTenant(t), NewSource: fakeSource})
}

// TestFaults reads a drive through injected faults.
func TestFaults(t *testing.T) {
	t.Parallel()
	sourcetest.RunFaults(t, fakeSource, sourcetest.FaultPaths{List: "/drive/v3/files", Download: "alt=media"})
}
