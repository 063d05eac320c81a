package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
)

// CheckSize returns ErrTooLarge, wrapped and naming key, its size and max,
// when size (an object's size as the store reports it) is over max. A
// negative size means the store did not tell it, and passes: the read
// itself is then bounded (ReadLimited).
func CheckSize(key string, size, max int64) error {
	if max < 0 {
		return fmt.Errorf("%s: invalid read bound %d", key, max)
	}
	if size > max {
		return fmt.Errorf("%s: %d bytes, more than the %d allowed: %w", key, size, max, ErrTooLarge)
	}
	return nil
}

// ReadLimited reads the content of the object key from r, for Get. size is
// the object's size as the store reported it before the read (negative when
// it did not), max the caller's bound. It never reads more than max+1
// bytes, and allocates at most max+1 (size bytes when size is known):
//   - an object over max is ErrTooLarge, without a read when size tells it;
//   - content shorter than size is io.ErrUnexpectedEOF, longer than size
//     an error too (the object changed while it was read, or the server
//     sent more than it announced).
func ReadLimited(r io.Reader, key string, size, max int64) ([]byte, error) {
	if err := CheckSize(key, size, max); err != nil {
		return nil, err
	}
	if size < 0 {
		limit := max
		if limit < math.MaxInt64 {
			limit++
		}
		data, err := io.ReadAll(io.LimitReader(r, limit))
		if err != nil {
			return nil, err
		}
		if int64(len(data)) > max {
			return nil, fmt.Errorf("%s: more than the %d bytes allowed: %w", key, max, ErrTooLarge)
		}
		return data, nil
	}
	data := make([]byte, size)
	if n, err := io.ReadFull(r, data); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%s: read %d of its %d bytes: %w", key, n, size, err)
	}
	var extra [1]byte
	n, err := io.ReadFull(r, extra[:])
	switch {
	case n > 0:
		return nil, fmt.Errorf("%s: more content than its %d bytes (changed while it was read?)", key, size)
	case !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return data, nil
}

// NotRegular returns ErrNotRegular naming path, the file a file system
// store found where an object should be, and what it is (mode's type).
func NotRegular(path string, mode fs.FileMode) error {
	return fmt.Errorf("%s is a %s: %w", path, fileKind(mode), ErrNotRegular)
}

// NotDirectory returns ErrNotDirectory naming path, the file a file system
// store found where a directory of keys should be, and what it is.
func NotDirectory(path string, mode fs.FileMode) error {
	return fmt.Errorf("%s is a %s: %w (the directories of a store must be real ones)", path, fileKind(mode), ErrNotDirectory)
}

// fileKind names the type of a file of mode, for messages.
func fileKind(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeSymlink != 0:
		return "symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		return "FIFO"
	case mode&fs.ModeSocket != 0:
		return "socket"
	case mode&fs.ModeCharDevice != 0:
		return "character device"
	case mode&fs.ModeDevice != 0:
		return "device"
	case mode.IsDir():
		return "directory"
	case mode.IsRegular():
		return "regular file"
	}
	return "special file"
}
