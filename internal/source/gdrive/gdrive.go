package gdrive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"

	"google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/cloud"
)

// ErrNoDrive means no shared drive has the name given.
var ErrNoDrive = errors.New("no shared drive of that name")

// ErrAmbiguous means a name given matches several drives or folders.
var ErrAmbiguous = errors.New("several items of that name")

// Config says which drive to read and how.
type Config struct {
	// Type is gdrive or gdrive-changes.
	Type string
	// DriveName is a shared drive's name; empty for My Drive.
	DriveName string
	// HTTP is the authorized client (see cloud.Client).
	HTTP *http.Client
	// Endpoint is the Drive API's base URL ("" for Google's:
	// https://www.googleapis.com/drive/v3/).
	Endpoint string
	// SkipNativeFiles leaves Google documents out instead of exporting
	// them.
	SkipNativeFiles bool
}

// fileFields are the fields of a file the source reads.
const fileFields = "id,name,mimeType,parents,size,modifiedTime,md5Checksum,sha256Checksum,trashed,shortcutDetails(targetId)"

// provider is the cloud.Provider of Google Drive.
type provider struct {
	cfg     Config
	srv     *drive.Service
	driveID string // a shared drive's id; "" for My Drive
}

// New returns the source of the drive cfg names.
func New(ctx context.Context, cfg Config) (*cloud.Source, error) {
	opts := []option.ClientOption{option.WithHTTPClient(cfg.HTTP)}
	if cfg.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(cfg.Endpoint))
	}
	srv, err := drive.NewService(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return cloud.New(&provider{cfg: cfg, srv: srv}), nil
}

// Resolve finds the account, the drive and the folder name.
func (p *provider) Resolve(ctx context.Context, name string) (source.Item, source.Identity, string, error) {
	id := source.Identity{Provider: "google", Type: p.cfg.Type, Changes: strings.HasSuffix(p.cfg.Type, "-changes")}
	about, err := p.srv.About.Get().Fields("user(emailAddress)").Context(ctx).Do()
	if err != nil {
		return source.Item{}, id, "", fmt.Errorf("google drive account: %w", err)
	}
	id.Account = about.User.EmailAddress
	rootID := "root"
	if p.cfg.DriveName != "" {
		if rootID, err = p.sharedDrive(ctx, p.cfg.DriveName); err != nil {
			return source.Item{}, id, "", err
		}
		p.driveID = rootID
	}
	clean := strings.Trim(path.Clean("/"+name), "/")
	folder, err := p.get(ctx, rootID)
	if err != nil {
		return source.Item{}, id, "", fmt.Errorf("google drive root folder: %w", err)
	}
	id.DriveID = folder.ID
	if p.driveID != "" {
		id.DriveID = p.driveID
	}
	if clean != "" {
		for _, part := range strings.Split(clean, "/") {
			if folder, err = p.child(ctx, folder.ID, part); err != nil {
				return source.Item{}, id, "", fmt.Errorf("google drive folder /%s: %w", clean, err)
			}
		}
	}
	id.RootID = folder.ID
	uri := p.cfg.Type + ":/" + clean
	if p.cfg.DriveName != "" {
		uri = strings.TrimSuffix(p.cfg.Type+"://"+p.cfg.DriveName+"/"+clean, "/")
	}
	return folder, id, uri, nil
}

// sharedDrive returns the id of the shared drive named name.
func (p *provider) sharedDrive(ctx context.Context, name string) (string, error) {
	var found []string
	err := p.srv.Drives.List().PageSize(100).Q("name = '"+quote(name)+"'").Fields("nextPageToken,drives(id,name)").
		Pages(ctx, func(l *drive.DriveList) error {
			for _, d := range l.Drives {
				if d.Name == name {
					found = append(found, d.Id)
				}
			}
			return nil
		})
	switch {
	case err != nil:
		return "", fmt.Errorf("google shared drives: %w", err)
	case len(found) == 0:
		return "", fmt.Errorf("%w: %q", ErrNoDrive, name)
	case len(found) > 1:
		return "", fmt.Errorf("%w: %d shared drives are named %q", ErrAmbiguous, len(found), name)
	}
	return found[0], nil
}

// child returns the folder name in the folder parent.
func (p *provider) child(ctx context.Context, parent, name string) (source.Item, error) {
	q := fmt.Sprintf("'%s' in parents and name = '%s' and mimeType = '%s' and trashed = false", quote(parent), quote(name), folderMIME)
	items, err := p.list(ctx, q)
	if err != nil {
		return source.Item{}, err
	}
	switch len(items) {
	case 0:
		return source.Item{}, fmt.Errorf("no folder %q", name)
	case 1:
		return items[0], nil
	}
	return source.Item{}, fmt.Errorf("%w: %d folders are named %q", ErrAmbiguous, len(items), name)
}

// get reads one item.
func (p *provider) get(ctx context.Context, id string) (source.Item, error) {
	f, err := p.srv.Files.Get(id).Fields(fileFields).SupportsAllDrives(true).Context(ctx).Do()
	if err != nil {
		return source.Item{}, err
	}
	it, _ := p.item(f)
	return it, nil
}

// Full lists every item of the drive that is not trashed.
func (p *provider) Full(ctx context.Context, withToken bool) ([]source.Item, string, error) {
	var token string
	if withToken {
		call := p.srv.Changes.GetStartPageToken().SupportsAllDrives(true).Context(ctx)
		if p.driveID != "" {
			call = call.DriveId(p.driveID)
		}
		st, err := call.Do()
		if err != nil {
			return nil, "", fmt.Errorf("google drive start page token: %w", err)
		}
		token = st.StartPageToken
	}
	items, err := p.list(ctx, "trashed = false")
	return items, token, err
}

// Folder lists the folder id.
func (p *provider) Folder(ctx context.Context, id string) ([]source.Item, error) {
	return p.list(ctx, fmt.Sprintf("'%s' in parents and trashed = false", quote(id)))
}

// list lists the items q matches, every page.
func (p *provider) list(ctx context.Context, q string) ([]source.Item, error) {
	call := p.srv.Files.List().Q(q).PageSize(1000).Fields(googleapi.Field("nextPageToken,files(" + fileFields + ")")).
		SupportsAllDrives(true).Context(ctx)
	if p.driveID != "" {
		call = call.Corpora("drive").DriveId(p.driveID).IncludeItemsFromAllDrives(true)
	}
	var items []source.Item
	err := call.Pages(ctx, func(l *drive.FileList) error {
		for _, f := range l.Files {
			if it, ok := p.item(f); ok && !f.Trashed {
				items = append(items, it)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("google drive listing: %w", err)
	}
	return items, nil
}

// Changes reads the change feed from token to its end.
func (p *provider) Changes(ctx context.Context, token string) (cloud.Changes, error) {
	var ch cloud.Changes
	for token != "" {
		call := p.srv.Changes.List(token).PageSize(1000).IncludeRemoved(true).SupportsAllDrives(true).
			Fields(googleapi.Field("nextPageToken,newStartPageToken,changes(fileId,removed,file(" + fileFields + "))")).Context(ctx)
		if p.driveID != "" {
			call = call.DriveId(p.driveID).IncludeItemsFromAllDrives(true)
		}
		l, err := call.Do()
		var gerr *googleapi.Error
		if errors.As(err, &gerr) && (gerr.Code == http.StatusGone || gerr.Code == http.StatusBadRequest) {
			return ch, fmt.Errorf("google drive changes: %w (%d %s)", source.ErrTokenExpired, gerr.Code, gerr.Message)
		}
		if err != nil {
			return ch, fmt.Errorf("google drive changes: %w", err)
		}
		for _, c := range l.Changes {
			it, ok := source.Item{}, false
			if c.File != nil && !c.Removed && !c.File.Trashed {
				it, ok = p.item(c.File)
			}
			if ok {
				ch.Upserts = append(ch.Upserts, it)
			} else {
				ch.Removed = append(ch.Removed, c.FileId)
			}
		}
		token = l.NextPageToken
		if l.NewStartPageToken != "" {
			ch.Token = l.NewStartPageToken
		}
	}
	return ch, nil
}

// Open downloads a file, or exports a document.
func (p *provider) Open(ctx context.Context, it source.Item, offset int64) (io.ReadCloser, error) {
	var resp *http.Response
	var err error
	if exp, ok := exports[it.MIME]; ok {
		resp, err = p.srv.Files.Export(it.ID, exp.mime).Context(ctx).Download()
	} else {
		call := p.srv.Files.Get(it.ID).SupportsAllDrives(true).Context(ctx)
		if r := cloud.RangeHeader(offset); r != "" {
			call.Header().Set("Range", r)
		}
		resp, err = call.Download()
	}
	if err != nil {
		return nil, err
	}
	return cloud.Body(resp, offset)
}

// Suffix is the export extension of a Google document.
func (p *provider) Suffix(it source.Item) string { return exports[it.MIME].ext }

// Exported says whether it is a Google document.
func (p *provider) Exported(it source.Item) bool { _, ok := exports[it.MIME]; return ok }

// item converts a Drive file; ok is false for what is not backed up (a
// Google type without an export format, or any document under
// SkipNativeFiles).
func (p *provider) item(f *drive.File) (source.Item, bool) {
	it := source.Item{ID: f.Id, Name: f.Name, Size: f.Size, Dir: f.MimeType == folderMIME}
	if len(f.Parents) > 0 {
		it.ParentID = f.Parents[0]
	}
	if t, err := time.Parse(time.RFC3339Nano, f.ModifiedTime); err == nil {
		it.MTime = t.UnixNano()
	}
	switch {
	case it.Dir:
		it.Size = 0
	case f.MimeType == cloud.ShortcutMIME:
		it.MIME, it.Size = f.MimeType, 0
		if f.ShortcutDetails != nil {
			it.Target = f.ShortcutDetails.TargetId
		}
	case strings.HasPrefix(f.MimeType, googleType):
		if _, ok := exports[f.MimeType]; !ok || p.cfg.SkipNativeFiles {
			return it, false
		}
		it.MIME, it.Size, it.Hash = f.MimeType, 0, "export:"+f.ModifiedTime
	case f.Sha256Checksum != "":
		it.Hash = "sha256:" + strings.ToLower(f.Sha256Checksum)
	case f.Md5Checksum != "":
		it.Hash = "md5:" + strings.ToLower(f.Md5Checksum)
	}
	return it, true
}

// quote escapes s for a string literal of a Drive query.
func quote(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
}

const (
	folderMIME = "application/vnd.google-apps.folder"
	googleType = "application/vnd.google-apps."
)

// exports are the formats Google documents are stored in.
var exports = map[string]struct{ mime, ext string }{
	"application/vnd.google-apps.document":     {"application/vnd.openxmlformats-officedocument.wordprocessingml.document", ".docx"},
	"application/vnd.google-apps.spreadsheet":  {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", ".xlsx"},
	"application/vnd.google-apps.presentation": {"application/vnd.openxmlformats-officedocument.presentationml.presentation", ".pptx"},
	"application/vnd.google-apps.drawing":      {"image/svg+xml", ".svg"},
	"application/vnd.google-apps.script":       {"application/vnd.google-apps.script+json", ".json"},
}
