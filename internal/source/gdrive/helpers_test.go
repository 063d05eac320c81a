package gdrive_test

import "net/http"

// httpClient wraps a transport as a client.
func httpClient(rt http.RoundTripper) *http.Client { return &http.Client{Transport: rt} }
