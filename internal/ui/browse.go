package ui

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// snapRef returns the snapshot reference of the request's path ("latest",
// or repo.MinPrefix to 64 hex digits), or answers 400.
func (s *Server) snapRef(w http.ResponseWriter, r *http.Request) (string, bool) {
	ref := r.PathValue("snap")
	ok := validRef(ref)
	if !ok {
		s.errorPage(w, r, http.StatusBadRequest, "Bad snapshot id", fmt.Sprintf("%q is not a snapshot id: give \"latest\" or at least %d lowercase hex digits.", ref, repo.MinPrefix))
	}
	return ref, ok
}

// validRef reports whether ref is "latest" or a snapshot id prefix.
func validRef(ref string) bool {
	return ref == "latest" || (len(ref) >= repo.MinPrefix && len(ref) <= 64 && strings.Trim(ref, "0123456789abcdef") == "")
}

// cleanPath turns the ?path= of a request into a path from the snapshot
// root without leading or trailing "/" ("" is the root). ".." cannot climb
// above the root.
func cleanPath(p string) string { return strings.Trim(path.Clean("/"+p), "/") }

// crumb is one step of the path shown above a directory listing.
type crumb struct{ Name, Path string }

// browsePage lists one directory of a snapshot.
type browsePage struct {
	Snap    snapshot.WithID
	Path    string // from the snapshot root, "" for the root
	Crumbs  []crumb
	Entries []tree.Node
}

func crumbs(p string) []crumb {
	out := []crumb{{Name: "/", Path: ""}}
	if p == "" {
		return out
	}
	acc := ""
	for _, part := range strings.Split(p, "/") {
		acc = path.Join(acc, part)
		out = append(out, crumb{Name: part, Path: acc})
	}
	return out
}

// handleBrowse lists a directory of a snapshot, or sends a file.
func (s *Server) handleBrowse(w http.ResponseWriter, r *http.Request) {
	i, ok := s.repoIndex(w, r)
	if !ok {
		return
	}
	ref, ok := s.snapRef(w, r)
	if !ok {
		return
	}
	page := browsePage{Path: cleanPath(r.URL.Query().Get("path"))}
	var err error
	page.Snap, page.Entries, err = operation.Browse(r.Context(), s.fresh(i), "ui", ref, page.Path)
	if err != nil {
		s.pathError(w, r, page.Path, err)
		return
	}
	page.Crumbs = crumbs(page.Path)
	s.render(w, r, http.StatusOK, "browse", pageData{Title: "Snapshot " + page.Snap.ID.Short(), Repo: s.view(i), Data: page})
}

// pathError answers a path the snapshot does not have with 404.
func (s *Server) pathError(w http.ResponseWriter, r *http.Request, p string, err error) {
	if errors.Is(err, operation.ErrNotFound) || errors.Is(err, operation.ErrNotDir) {
		s.errorPage(w, r, http.StatusNotFound, "Not found", fmt.Sprintf("The snapshot has no directory /%s (%v).", p, err))
		return
	}
	s.readError(w, r, err)
}

// handleDownload sends a file's contents, or a directory as a zip archive
// streamed as it is read. An error after the first byte aborts the
// response, so a browser never keeps a truncated file as complete.
func (s *Server) handleDownload(w http.ResponseWriter, r *http.Request) {
	i, ok := s.repoIndex(w, r)
	if !ok {
		return
	}
	ref, ok := s.snapRef(w, r)
	if !ok {
		return
	}
	p := cleanPath(r.URL.Query().Get("path"))
	started := false
	var out *startOnWrite
	_, _, err := operation.Dump(r.Context(), s.fresh(i), "ui-download", operation.DumpRequest{Ref: ref, Path: p,
		Open: func(snap snapshot.WithID, n *tree.Node) (string, io.Writer, error) {
			name := path.Base("/" + p)
			if p == "" {
				name = "snapshot-" + snap.ID.Short()
			}
			// The response starts with the first byte, so that an error
			// before it (a directory refused by the tree bounds) still
			// gets an error page.
			out = &startOnWrite{w: w, started: &started}
			switch n.Type {
			case tree.TypeFile:
				out.start = func() { startDownload(w, name, "application/octet-stream") }
				return "", out, nil
			case tree.TypeDir:
				out.start = func() { startDownload(w, name+".zip", "application/zip") }
				return operation.FormatZip, out, nil
			default:
				return "", nil, fmt.Errorf("/%s is a %s: %w", p, n.Type, errNotDownloadable)
			}
		}})
	if out != nil && out.start != nil {
		err = out.finish(err)
	}
	switch {
	case err == nil:
	case started:
		panic(http.ErrAbortHandler) // cut the connection: the download is incomplete
	case errors.Is(err, errNotDownloadable):
		s.errorPage(w, r, http.StatusBadRequest, "Cannot download", frontend.OneLine(err.Error()))
	default:
		s.pathError(w, r, p, err)
	}
}

// startOnWrite calls start before the first byte goes to w.
type startOnWrite struct {
	w       io.Writer
	start   func()
	started *bool
}

func (s *startOnWrite) Write(p []byte) (int, error) {
	if !*s.started {
		s.start()
		*s.started = true
	}
	return s.w.Write(p)
}

// finish starts a response that ended without writing a byte (an empty
// file) and returns err.
func (s *startOnWrite) finish(err error) error {
	if err == nil && !*s.started {
		s.start()
		*s.started = true
	}
	return err
}

// errNotDownloadable: the path is neither a file nor a directory.
var errNotDownloadable = errors.New("only files and directories can be downloaded")

func startDownload(w http.ResponseWriter, name, ctype string) {
	w.Header().Set("Content-Type", ctype)
	disp := mime.FormatMediaType("attachment", map[string]string{"filename": name})
	if disp == "" {
		disp = "attachment"
	}
	w.Header().Set("Content-Disposition", disp)
	w.WriteHeader(http.StatusOK)
}
