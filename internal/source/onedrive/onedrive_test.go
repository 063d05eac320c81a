package onedrive_test

import (
	"net/http"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/cloud"
	"github.com/cloudstic/cloudstic/internal/source/onedrive"
	"github.com/cloudstic/cloudstic/internal/source/sourcetest"
	"github.com/cloudstic/cloudstic/test/fakecloud"
)

// fakeSource opens a onedrive-changes source on the fake Graph, over
// oauth2's client with token refresh.
func fakeSource(t *testing.T, c *fakecloud.Client) source.Source {
	t.Helper()
	conf, err := cloud.OAuthConfig(cloud.OneDrive, c.Tenant.Name, "", c.OAuthURL())
	if err != nil {
		t.Fatal(err)
	}
	tok := &oauth2.Token{AccessToken: c.Tenant.AccessToken, RefreshToken: c.Tenant.RefreshToken, Expiry: time.Now().Add(time.Hour)}
	tokens := cloud.NewTokens(conf, cloud.PlainClient(cloud.Deadlines{}), tok, nil)
	retry := &cloud.Retry{Base: &oauth2.Transport{Source: tokens, Base: cloud.NewTransport(cloud.Deadlines{})},
		Refresh: tokens.Invalidate, Backoff: time.Millisecond}
	return onedrive.New(onedrive.Config{Type: "onedrive-changes", Endpoint: c.GraphEndpoint(), HTTP: &http.Client{Transport: retry}})
}

// TestConformance runs the source suite on the fake OneDrive.
func TestConformance(t *testing.T) {
	t.Parallel()
	sourcetest.Run(t, &sourcetest.FakeDrive{C: sourcetest.NewTenant(t), NewSource: fakeSource})
}

// TestFaults reads a drive through injected faults.
func TestFaults(t *testing.T) {
	t.Parallel()
	sourcetest.RunFaults(t, fakeSource, sourcetest.FaultPaths{List: "/delta", Download: "/download/"})
}
