package ui

import (
	"bytes"
	"html/template"
	"net/http"
	"path"
	"strconv"
	"time"

	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// pages are the templates rendered as whole pages; each is parsed with the
// layout and the shared parts.
var pages = []string{"index", "repo", "browse", "find", "diff", "restore", "job", "error"}

// funcs are the helpers templates call.
var funcs = template.FuncMap{
	"bytes": frontend.HumanBytes,
	"short": func(i id.ID) string { return i.Short() },
	"when":  func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
	"secs":  func(d time.Duration) string { return d.Round(time.Second).String() },
	"join":  func(a, b string) string { return path.Join("/", a, b) },
	"itoa":  strconv.Itoa,
	"int64": func(n uint64) int64 { return int64(n) },
	"mtime": func(ns int64) string { return time.Unix(0, ns).Local().Format("2006-01-02 15:04:05") },
}

// templates are the parsed pages, and the shared parts alone for the
// live panels' fragments.
type templates struct {
	pages map[string]*template.Template
	parts *template.Template
}

func parseTemplates() (*templates, error) {
	parts, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/parts.html")
	if err != nil {
		return nil, err
	}
	t := &templates{pages: map[string]*template.Template{}, parts: parts}
	for _, p := range pages {
		pt, err := template.New(p).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/"+p+".html")
		if err != nil {
			return nil, err
		}
		t.pages[p] = pt
	}
	return t, nil
}

// pageData is what every page gets: its own data in Data.
type pageData struct {
	Title    string
	CSRF     string
	ReadOnly bool
	Repo     *repoView // the repository the page is about, or nil
	Data     any
}

// repoView is a repository as pages see it.
type repoView struct {
	Index int
	Name  string
	Store string
}

// URL is the repository page's address.
func (v *repoView) URL() string { return "/r/" + strconv.Itoa(v.Index) + "/" }

func (s *Server) view(i int) *repoView {
	r := s.cfg.Repos[i]
	return &repoView{Index: i, Name: r.Name, Store: r.Store}
}

// render writes a whole page. It renders into a buffer first, so that a
// template error becomes a 500 rather than half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page string, pd pageData) {
	if sess, ok := r.Context().Value(sessionKey{}).(session); ok {
		pd.CSRF = s.csrfToken(sess)
	}
	pd.ReadOnly = s.cfg.ReadOnly
	var buf bytes.Buffer
	err := s.tmpl.pages[page].ExecuteTemplate(&buf, "layout", pd)
	if err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // the client went away: nothing to do
}

// fragment renders one shared part (a live panel) to a string.
func (s *Server) fragment(name string, data any) (string, error) {
	var buf bytes.Buffer
	if err := s.tmpl.parts.ExecuteTemplate(&buf, name, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// errorPage answers with a page saying what went wrong, in one line.
func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	s.render(w, r, status, "error", pageData{Title: title, Data: msg})
}
