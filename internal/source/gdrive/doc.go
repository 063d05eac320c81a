// Package gdrive is the source of a Google Drive folder: My Drive or a
// shared drive, whole or a folder below its root, read through the Drive
// API v3 (google.golang.org/api/drive/v3) with an OAuth client of
// golang.org/x/oauth2 (see package cloud for the tree, downloads and
// retries it shares with OneDrive).
//
// What it records of each item: its id, Drive's sha256Checksum (or
// md5Checksum when Drive gives no SHA-256), size and modification time.
// Trashed items are left out. Google Docs, Sheets, Slides, Drawings and
// Apps Script projects have no bytes of their own: they are exported, as
// .docx, .xlsx, .pptx, .svg and .json, and stored under their name with
// that extension; other Google types (Forms, Sites, Maps) cannot be
// exported and are left out. Shortcuts are stored as symbolic links to
// their target's path in the tree (or to "id:<target id>" when the target
// is elsewhere), never followed.
//
// The gdrive-changes source reads Drive's change feed: the snapshot keeps
// the start page token taken before its listing, and the next backup
// reads only the changes since.
package gdrive
