// Package exclude decides which entries of a backup source are left out:
// patterns in gitignore syntax (Matcher), and the rules that look at the
// file system (Filter: -exclude-if-present, -exclude-caches,
// -exclude-larger-than, -one-file-system). The backup walk and the CLI's
// progress pre-walk both use it, so what is counted is what is stored.
package exclude
