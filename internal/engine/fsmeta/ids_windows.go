package fsmeta

// Windows files have no Unix owners: the caches of their names are empty.

// idNames would cache uid and gid names (see ids_unix.go).
type idNames struct{}

func newIDNames() *idNames { return &idNames{} }

// localIDs would cache this machine's uids and gids (see ids_unix.go).
type localIDs struct{}

func newLocalIDs() *localIDs { return &localIDs{} }
