// Package ui is cloudstic's local web dashboard (`cloudstic ui`): one page
// per repository with its snapshots as a timeline per host and source, its
// size and deduplication ratio over time, and its locks updated live; a
// snapshot browser with file-name search, diff, downloads (a file, or a
// directory as a streamed zip) and restores; and runs of a profile's
// backup, forget+prune or check with live progress.
//
// It sits above the engine, beside the command line, and neither imports
// the other: `cloudstic ui` opens the repositories and describes them
// (cli.DashboardConfig), and cmd/cloudstic copies that into Config and
// hands the CLI this package's server. Nothing below imports it.
// Pages are html/template (auto-escaped) with assets embedded in the binary;
// plots are SVG drawn on the server; live panels are server-sent events
// (each event's data one JSON string, so a CR or LF from the store cannot
// start a forged line) with a few lines of embedded JavaScript, and every
// page works without it.
//
// Every request needs the access token (once, in the URL printed at start,
// which sets a session cookie) or HTTP basic credentials; every POST needs
// the session's CSRF token. Cookies are HttpOnly and SameSite=Strict, and
// no secret of a repository ever reaches a page.
package ui
