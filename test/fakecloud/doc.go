// Package fakecloud is a test server for the two cloud drive APIs the
// sources read: Google Drive v3 (under /drive/v3/) and Microsoft Graph
// v1.0 (under /v1.0/), with an OAuth 2 server for both (/oauth/: token,
// device code and authorize endpoints with PKCE). The official clients
// (google.golang.org/api/drive/v3, golang.org/x/oauth2) reach it through
// their endpoint settings. It implements what the sources call: paging
// (nextPageToken, @odata.nextLink), Drive's fields parameter, the change
// feeds (Drive changes with start page tokens, Graph delta with delta
// links, 410 for an expired token), Range, exports of Google documents.
//
// Each test creates its own tenant (an account with its drive) through
// the admin API under /_admin/ (see Client), changes its files, injects
// faults (429 with Retry-After, Drive's 403 rateLimitExceeded, 500, 401,
// a stream cut mid-body) and reads counters of requests and bytes served.
// The OAuth client id is the tenant's name.
//
// cmd/fakecloud serves it; scripts/cloud-server.sh starts that binary.
package fakecloud
