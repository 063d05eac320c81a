package fakecloud

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Client drives a running fake through its admin API, for one tenant.
type Client struct {
	// URL is the fake's base URL (http://127.0.0.1:PORT).
	URL    string
	Tenant Tenant
}

// NewTenant creates a tenant named name on the fake at url.
func NewTenant(ctx context.Context, url, name string) (*Client, error) {
	c := &Client{URL: url}
	if err := c.call(ctx, http.MethodPost, "/_admin/"+name, nil, &c.Tenant); err != nil {
		return nil, err
	}
	return c, nil
}

// Put creates or replaces an item; the answer has its id.
func (c *Client) Put(ctx context.Context, it Item) (Item, error) {
	var out Item
	err := c.call(ctx, http.MethodPost, c.path("items"), it, &out)
	return out, err
}

// Patch changes the fields of item id that change holds (a JSON object of
// Item's fields).
func (c *Client) Patch(ctx context.Context, id string, change map[string]any) error {
	return c.call(ctx, http.MethodPatch, c.path("items/"+id), change, nil)
}

// Delete removes item id for good.
func (c *Client) Delete(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodDelete, c.path("items/"+id), nil, nil)
}

// SharedDrive creates a shared drive.
func (c *Client) SharedDrive(ctx context.Context, id, name string) error {
	return c.call(ctx, http.MethodPost, c.path("drives"), map[string]string{"ID": id, "Name": name}, nil)
}

// Fault injects a fault.
func (c *Client) Fault(ctx context.Context, f Fault) error {
	return c.call(ctx, http.MethodPost, c.path("faults"), f, nil)
}

// ExpireTokens makes every change token issued so far expired.
func (c *Client) ExpireTokens(ctx context.Context) error {
	return c.call(ctx, http.MethodPost, c.path("expire-tokens"), nil, nil)
}

// ExpireAccess makes the current access token invalid (401).
func (c *Client) ExpireAccess(ctx context.Context) error {
	return c.call(ctx, http.MethodPost, c.path("expire-access"), nil, nil)
}

// Stats returns the counters; ResetStats zeroes them.
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	err := c.call(ctx, http.MethodGet, c.path("stats"), nil, &s)
	return s, err
}

// ResetStats zeroes the counters.
func (c *Client) ResetStats(ctx context.Context) error {
	return c.call(ctx, http.MethodDelete, c.path("stats"), nil, nil)
}

// DriveEndpoint is the Drive API base URL of the fake.
func (c *Client) DriveEndpoint() string { return c.URL + "/drive/v3/" }

// GraphEndpoint is the Graph base URL of the fake.
func (c *Client) GraphEndpoint() string { return c.URL + "/v1.0" }

// OAuthURL is the base of the fake's OAuth endpoints.
func (c *Client) OAuthURL() string { return c.URL + "/oauth" }

func (c *Client) path(p string) string { return "/_admin/" + c.Tenant.Name + "/" + p }

func (c *Client) call(ctx context.Context, method, p string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+p, body)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close() //nolint:errcheck // test client
	if resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(resp.Body) // for the message only
		return fmt.Errorf("fakecloud %s %s: %s: %s", method, p, resp.Status, msg)
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}
