package fakecloud

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Tenant is what creating a tenant returns: its tokens (the OAuth client
// id is its name).
type Tenant struct {
	Name         string `json:"name"`
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	RootID       string `json:"root_id"`
	DriveID      string `json:"drive_id"`
}

// admin serves /_admin/NAME[/...]:
//
//	POST   /_admin/NAME            create the tenant (answers a Tenant)
//	POST   /_admin/NAME/items      create or replace an Item (answers it)
//	PATCH  /_admin/NAME/items/ID   change fields given (name, parent, data, trashed, mtime)
//	DELETE /_admin/NAME/items/ID   delete for good
//	POST   /_admin/NAME/drives     {"id","name"}: a shared drive
//	POST   /_admin/NAME/faults     a Fault
//	POST   /_admin/NAME/expire-tokens      change tokens issued so far become expired
//	POST   /_admin/NAME/expire-access      the current access token becomes invalid (401)
//	GET    /_admin/NAME/stats      Stats; DELETE resets them
func (s *Server) admin(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/_admin/"), "/")
	name := parts[0]
	if len(parts) == 1 && r.Method == http.MethodPost {
		s.mu.Lock()
		if s.tenants[name] != nil {
			s.mu.Unlock()
			http.Error(w, "tenant exists", http.StatusConflict)
			return
		}
		t := newTenant(name)
		s.tenants[name] = t
		s.tokens[t.access] = t
		rt := "rt-" + name
		s.refresh[rt] = t
		s.mu.Unlock()
		writeJSON(w, Tenant{Name: name, AccessToken: t.access, RefreshToken: rt, RootID: t.rootID(), DriveID: t.driveID()})
		return
	}
	s.mu.Lock()
	t := s.tenants[name]
	s.mu.Unlock()
	if t == nil || len(parts) < 2 {
		http.NotFound(w, r)
		return
	}
	if parts[1] == "expire-access" {
		t.mu.Lock()
		t.access = t.newToken() // issued to nobody: the client must refresh
		t.mu.Unlock()
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case parts[1] == "items" && r.Method == http.MethodPost:
		var it Item
		if err := json.NewDecoder(r.Body).Decode(&it); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if it.Parent == "" {
			it.Parent = t.rootID()
		}
		writeJSON(w, t.put(it))
	case parts[1] == "items" && len(parts) == 3 && r.Method == http.MethodPatch:
		it := t.items[parts[2]]
		if it == nil {
			http.NotFound(w, r)
			return
		}
		c := *it
		if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if c.MTime.Equal(it.MTime) && (string(c.Data) != string(it.Data)) {
			c.MTime = it.MTime.Add(time.Second)
		}
		writeJSON(w, t.put(c))
	case parts[1] == "items" && len(parts) == 3 && r.Method == http.MethodDelete:
		delete(t.items, parts[2])
		t.logChange(parts[2])
	case parts[1] == "drives":
		var d struct{ ID, Name string }
		if err := json.NewDecoder(r.Body).Decode(&d); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		t.drives[d.ID] = d.Name
		t.put(Item{ID: d.ID, Name: d.Name, Dir: true, Drive: d.ID, Parent: ""})
	case parts[1] == "faults":
		var f Fault
		if err := json.NewDecoder(r.Body).Decode(&f); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		t.faults = append(t.faults, f)
	case parts[1] == "expire-tokens":
		t.minTok = t.seq + 1
	case parts[1] == "stats" && r.Method == http.MethodGet:
		writeJSON(w, t.stats)
	case parts[1] == "stats" && r.Method == http.MethodDelete:
		t.stats = Stats{ByPath: map[string]int{}}
	default:
		http.NotFound(w, r)
	}
}

// oauth serves the OAuth 2 endpoints of both providers:
//
//	GET  /oauth/authorize, /oauth/auth   approves at once: redirects to redirect_uri with a code
//	POST /oauth/token                    authorization_code (PKCE S256), refresh_token, device_code grants
//	POST /oauth/device/code, /devicecode a device code, approved on its second poll
//
// (Graph's paths and Google's, below one base.)
//
// The client id names the tenant.
func (s *Server) oauth(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tenants[r.Form.Get("client_id")]
	switch r.URL.Path {
	case "/oauth/authorize", "/oauth/auth":
		if t == nil || r.Form.Get("code_challenge_method") != "S256" {
			http.Error(w, "unknown client or no PKCE", http.StatusBadRequest)
			return
		}
		t.mu.Lock()
		code := fmt.Sprintf("code-%s-%d", t.name, t.seq+len(t.codes))
		t.codes[code] = r.Form.Get("code_challenge")
		t.mu.Unlock()
		http.Redirect(w, r, r.Form.Get("redirect_uri")+"?code="+code+"&state="+r.Form.Get("state"), http.StatusFound)
	case "/oauth/device/code", "/oauth/devicecode":
		if t == nil {
			oauthErr(w, "invalid_client")
			return
		}
		dc := "dc-" + t.name + "-" + strconv.Itoa(len(s.device))
		s.device[dc] = &deviceCode{t: t}
		writeJSON(w, map[string]any{"device_code": dc, "user_code": "FAKE-" + strconv.Itoa(len(s.device)),
			"verification_uri": "http://" + r.Host + "/oauth/verify", "expires_in": 600, "interval": 1})
	case "/oauth/token":
		s.token(w, r, t)
	default:
		http.NotFound(w, r)
	}
}

// token answers the token endpoint. Callers hold s.mu.
func (s *Server) token(w http.ResponseWriter, r *http.Request, t *tenant) {
	switch r.Form.Get("grant_type") {
	case "refresh_token":
		t = s.refresh[r.Form.Get("refresh_token")]
		if t == nil {
			oauthErr(w, "invalid_grant")
			return
		}
		t.mu.Lock()
		t.stats.TokenRefresh++
		t.mu.Unlock()
	case "authorization_code":
		if t == nil {
			oauthErr(w, "invalid_client")
			return
		}
		t.mu.Lock()
		challenge, ok := t.codes[r.Form.Get("code")]
		delete(t.codes, r.Form.Get("code"))
		t.mu.Unlock()
		if !ok || !pkceOK(r.Form.Get("code_verifier"), challenge) {
			oauthErr(w, "invalid_grant")
			return
		}
	case "urn:ietf:params:oauth:grant-type:device_code":
		dc := s.device[r.Form.Get("device_code")]
		if dc == nil {
			oauthErr(w, "expired_token")
			return
		}
		if dc.polls++; dc.polls < 2 {
			oauthErr(w, "authorization_pending")
			return
		}
		t = dc.t
	default:
		oauthErr(w, "unsupported_grant_type")
		return
	}
	t.mu.Lock()
	t.access = t.newToken()
	at := t.access
	t.mu.Unlock()
	s.tokens[at] = t
	rt := "rt-" + t.name
	s.refresh[rt] = t
	writeJSON(w, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "refresh_token": rt})
}

func oauthErr(w http.ResponseWriter, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	writeJSONBody(w, map[string]string{"error": code})
}

func writeJSONBody(w http.ResponseWriter, v any) {
	_ = json.NewEncoder(w).Encode(v) //nolint:errchkjson // test server
}
