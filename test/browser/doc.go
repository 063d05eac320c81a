// Package browser tests `cloudstic ui` end to end in a real browser:
// Debian's chromium, headless, driven by chromedp, against the real
// cloudstic binary serving a real repository while other cloudstic
// processes back up into it. The tests fail, never skip, when chromium is
// missing (scripts/test.sh installs it). With CLOUDSTIC_UPDATE_SCREENSHOTS=1
// they write the screenshots of docs/ui.md into docs/ui/.
package browser
