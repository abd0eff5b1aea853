//go:build !windows

package mailbox

import "os"

// removeFile removes name; see fs_windows.go for why Windows differs.
func removeFile(root *os.Root, name string) error { return root.Remove(name) }

// OpenRoot is os.OpenRoot (fs_windows.go retries a sharing violation).
func OpenRoot(dir string) (*os.Root, error) { return os.OpenRoot(dir) }

// renameFile renames oldname to newname, replacing newname.
func renameFile(root *os.Root, oldname, newname string) error { return root.Rename(oldname, newname) }

// linkCount returns the number of hard links of the open file f.
func linkCount(f *os.File) (uint64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return statLinks(fi), nil
}
