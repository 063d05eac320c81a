// Package cloud is what the cloud drive sources (source/gdrive,
// source/onedrive) share: the drive's items held by id (Model), the path
// tree built from them that backup walks (see Source), downloads that
// resume with Range and check the drive's checksum (see file), an HTTP
// transport that retries what the services ask to be retried, and the
// OAuth token handling around golang.org/x/oauth2.
//
// A drive is not a file system: names are not unique in a folder, may
// hold "/", documents have no bytes of their own, and shortcuts point at
// ids. The tree gives every item one safe, unique, stable name (see
// names.go), exports documents under the extension of their export
// format, and records shortcuts as symbolic links, never followed.
package cloud
