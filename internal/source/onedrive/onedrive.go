package onedrive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/cloud"
)

// DefaultEndpoint is Microsoft Graph v1.0 of the global cloud.
const DefaultEndpoint = "https://graph.microsoft.com/v1.0"

// ErrNoDrive means no drive of the user has the name given.
var ErrNoDrive = errors.New("no OneDrive drive of that name")

// ErrForeignLink means Graph answered with a link to another host.
var ErrForeignLink = errors.New("link outside the configured Graph URL")

// Config says which drive to read and how.
type Config struct {
	// Type is onedrive or onedrive-changes.
	Type string
	// DriveName names one of the user's drives; empty for their own.
	DriveName string
	// HTTP is the authorized client (see cloud.Client).
	HTTP *http.Client
	// Endpoint is Graph's base URL (default DefaultEndpoint).
	Endpoint string
}

// provider is the cloud.Provider of OneDrive.
type provider struct {
	cfg     Config
	base    string
	driveID string
}

// New returns the source of the drive cfg names.
func New(cfg Config) *cloud.Source {
	base := strings.TrimSuffix(cfg.Endpoint, "/")
	if base == "" {
		base = DefaultEndpoint
	}
	return cloud.New(&provider{cfg: cfg, base: base})
}

// driveItem is the part of a Graph driveItem the source reads.
type driveItem struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Size int64  `json:"size"`
	// LastModified is the item's time in OneDrive; FileSystemInfo's is
	// the one the client uploaded (the file's own).
	LastModified   string `json:"lastModifiedDateTime"`
	FileSystemInfo *struct {
		LastModified string `json:"lastModifiedDateTime"`
	} `json:"fileSystemInfo"`
	Folder *struct{} `json:"folder"`
	File   *struct {
		Hashes struct {
			SHA256   string `json:"sha256Hash"`
			SHA1     string `json:"sha1Hash"`
			QuickXor string `json:"quickXorHash"`
		} `json:"hashes"`
	} `json:"file"`
	Parent *struct {
		ID string `json:"id"`
	} `json:"parentReference"`
	Deleted *struct{} `json:"deleted"`
	Package *struct{} `json:"package"`
	Remote  *struct{} `json:"remoteItem"`
	Root    *struct{} `json:"root"`
}

// page is one page of a collection or a delta query.
type page struct {
	Value     []driveItem `json:"value"`
	NextLink  string      `json:"@odata.nextLink"`
	DeltaLink string      `json:"@odata.deltaLink"`
}

// Resolve finds the account, the drive and the folder name.
func (p *provider) Resolve(ctx context.Context, name string) (source.Item, source.Identity, string, error) {
	id := source.Identity{Provider: "onedrive", Type: p.cfg.Type, Changes: strings.HasSuffix(p.cfg.Type, "-changes")}
	var me struct {
		UPN  string `json:"userPrincipalName"`
		Mail string `json:"mail"`
	}
	if err := p.get(ctx, p.base+"/me", &me); err != nil {
		return source.Item{}, id, "", fmt.Errorf("onedrive account: %w", err)
	}
	id.Account = me.UPN
	if err := p.findDrive(ctx); err != nil {
		return source.Item{}, id, "", err
	}
	clean := strings.Trim(path.Clean("/"+name), "/")
	u := p.base + "/drives/" + url.PathEscape(p.driveID) + "/root"
	if clean != "" {
		segs := strings.Split(clean, "/")
		for i := range segs {
			segs[i] = url.PathEscape(segs[i])
		}
		u += ":/" + strings.Join(segs, "/") + ":"
	}
	var di driveItem
	if err := p.get(ctx, u, &di); err != nil {
		return source.Item{}, id, "", fmt.Errorf("onedrive folder /%s: %w", clean, err)
	}
	root, _ := p.item(di)
	id.DriveID, id.RootID = p.driveID, root.ID
	uri := p.cfg.Type + ":/" + clean
	if p.cfg.DriveName != "" {
		uri = strings.TrimSuffix(p.cfg.Type+"://"+p.cfg.DriveName+"/"+clean, "/")
	}
	return root, id, uri, nil
}

// findDrive sets the drive's id: the user's own, or the one named.
func (p *provider) findDrive(ctx context.Context) error {
	type drv struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if p.cfg.DriveName == "" {
		var d drv
		if err := p.get(ctx, p.base+"/me/drive", &d); err != nil {
			return fmt.Errorf("onedrive drive: %w", err)
		}
		p.driveID = d.ID
		return nil
	}
	next := p.base + "/me/drives"
	for next != "" {
		var l struct {
			Value    []drv  `json:"value"`
			NextLink string `json:"@odata.nextLink"`
		}
		if err := p.get(ctx, next, &l); err != nil {
			return fmt.Errorf("onedrive drives: %w", err)
		}
		for _, d := range l.Value {
			if d.Name == p.cfg.DriveName {
				p.driveID = d.ID
				return nil
			}
		}
		next = l.NextLink
	}
	return fmt.Errorf("%w: %q", ErrNoDrive, p.cfg.DriveName)
}

// Full lists the drive with a delta query from scratch; its delta link is
// the token.
func (p *provider) Full(ctx context.Context, withToken bool) ([]source.Item, string, error) {
	ch, err := p.delta(ctx, p.base+"/drives/"+url.PathEscape(p.driveID)+"/root/delta")
	if err != nil {
		return nil, "", err
	}
	if !withToken {
		ch.Token = ""
	}
	return ch.Upserts, ch.Token, nil
}

// Changes reads a delta query from the delta link token.
func (p *provider) Changes(ctx context.Context, token string) (cloud.Changes, error) {
	if !p.ours(token) {
		return cloud.Changes{}, fmt.Errorf("%w: the delta link is not of %s", source.ErrTokenExpired, p.base)
	}
	return p.delta(ctx, token)
}

// delta follows a delta query's pages to its delta link.
func (p *provider) delta(ctx context.Context, next string) (cloud.Changes, error) {
	var ch cloud.Changes
	for {
		var pg page
		if err := p.get(ctx, next, &pg); err != nil {
			return ch, fmt.Errorf("onedrive delta: %w", err)
		}
		for _, di := range pg.Value {
			if it, ok := p.item(di); ok && di.Deleted == nil {
				ch.Upserts = append(ch.Upserts, it)
			} else {
				ch.Removed = append(ch.Removed, di.ID)
			}
		}
		switch {
		case pg.NextLink != "":
			next = pg.NextLink
		case pg.DeltaLink != "":
			ch.Token = pg.DeltaLink
			return ch, nil
		default:
			return ch, errors.New("onedrive delta: a page with neither a next nor a delta link")
		}
	}
}

// Folder lists the folder id.
func (p *provider) Folder(ctx context.Context, id string) ([]source.Item, error) {
	next := p.base + "/drives/" + url.PathEscape(p.driveID) + "/items/" + url.PathEscape(id) + "/children"
	var items []source.Item
	for next != "" {
		var pg page
		if err := p.get(ctx, next, &pg); err != nil {
			return nil, fmt.Errorf("onedrive folder listing: %w", err)
		}
		for _, di := range pg.Value {
			if it, ok := p.item(di); ok {
				items = append(items, it)
			}
		}
		next = pg.NextLink
	}
	return items, nil
}

// Open downloads a file from byte offset on.
func (p *provider) Open(ctx context.Context, it source.Item, offset int64) (io.ReadCloser, error) {
	u := p.base + "/drives/" + url.PathEscape(p.driveID) + "/items/" + url.PathEscape(it.ID) + "/content"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if r := cloud.RangeHeader(offset); r != "" {
		req.Header.Set("Range", r)
	}
	resp, err := p.cfg.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return nil, graphError(resp)
	}
	return cloud.Body(resp, offset)
}

// Suffix is none: OneDrive files have bytes of their own.
func (p *provider) Suffix(source.Item) string { return "" }

// Exported is false for every item.
func (p *provider) Exported(source.Item) bool { return false }

// item converts a driveItem; ok is false for what is not backed up.
func (p *provider) item(di driveItem) (source.Item, bool) {
	it := source.Item{ID: di.ID, Name: di.Name, Size: di.Size, Dir: di.Folder != nil || di.Root != nil}
	if di.Parent != nil {
		it.ParentID = di.Parent.ID
	}
	mt := di.LastModified
	if di.FileSystemInfo != nil && di.FileSystemInfo.LastModified != "" {
		mt = di.FileSystemInfo.LastModified
	}
	if t, err := time.Parse(time.RFC3339Nano, mt); err == nil {
		it.MTime = t.UnixNano()
	}
	if it.Dir {
		it.Size = 0
	}
	if f := di.File; f != nil {
		switch h := f.Hashes; {
		case h.SHA256 != "":
			it.Hash = "sha256:" + strings.ToLower(h.SHA256)
		case h.SHA1 != "":
			it.Hash = "sha1:" + strings.ToLower(h.SHA1)
		case h.QuickXor != "":
			it.Hash = "quickxor:" + h.QuickXor
		}
	}
	ok := di.Package == nil && di.Remote == nil && (di.Folder != nil || di.File != nil || di.Root != nil)
	return it, ok
}

// ours says whether link points at the configured Graph URL.
func (p *provider) ours(link string) bool {
	return strings.HasPrefix(link, p.base+"/")
}

// get reads the JSON at u (under the configured Graph URL) into v.
func (p *provider) get(ctx context.Context, u string, v any) error {
	if !p.ours(u) {
		return fmt.Errorf("%w: %s", ErrForeignLink, u)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := p.cfg.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close() //nolint:errcheck // read-only
	if resp.StatusCode == http.StatusGone {
		return fmt.Errorf("%w: %w", source.ErrTokenExpired, graphError(resp))
	}
	if resp.StatusCode >= 300 {
		return graphError(resp)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	return nil
}

// StatusError is an error answer of Graph.
type StatusError struct {
	Status  int
	Code    string
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("graph: %d %s: %s", e.Status, e.Code, e.Message)
}

// graphError reads Graph's error answer and closes it.
func graphError(resp *http.Response) error {
	defer resp.Body.Close() //nolint:errcheck // read-only
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e) // the status alone is enough
	return &StatusError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
}
