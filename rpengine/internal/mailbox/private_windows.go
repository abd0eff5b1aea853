//go:build windows

package mailbox

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Folder and file modes the mailbox passes when it creates them. Windows
// ignores them (but for the read-only bit): new folders and files take
// the default ACL they inherit, which in the user's profile is private to
// the user, SYSTEM and Administrators.
const (
	DirMode  os.FileMode = 0o700
	FileMode os.FileMode = 0o600
)

// folderWriteRights are the rights that let someone put, replace or
// remove a file in a folder, or change who may.
// (FILE_ADD_FILE 0x2, FILE_ADD_SUBDIRECTORY 0x4, FILE_DELETE_CHILD 0x40.)
const folderWriteRights = 0x2 | 0x4 | 0x40 |
	windows.DELETE | windows.WRITE_DAC | windows.WRITE_OWNER | windows.GENERIC_WRITE | windows.GENERIC_ALL

// CheckPrivate returns nil when the open folder f is owned by this
// process's user (or by SYSTEM or Administrators, who can do anything
// anyway) and its ACL lets no one else write into it; otherwise it says
// why, in the terms of ssh's StrictModes. A NULL DACL lets everyone in.
func CheckPrivate(f *os.File) error {
	sd, err := windows.GetSecurityInfo(windows.Handle(f.Fd()), windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("reading its security descriptor: %w", err)
	}
	user, err := currentUser()
	if err != nil {
		return err
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return fmt.Errorf("reading its owner: %w", err)
	}
	if owner == nil || !trusted(owner, user) {
		return fmt.Errorf("owned by %s, not by this process's user %s", sidName(owner), user)
	}
	dacl, _, err := sd.DACL()
	if errors.Is(err, windows.ERROR_OBJECT_NOT_FOUND) || (err == nil && dacl == nil) {
		return errors.New("no access list (a NULL DACL): everyone can write into it")
	}
	if err != nil {
		return fmt.Errorf("reading its access list: %w", err)
	}
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return fmt.Errorf("reading its access list: %w", err)
		}
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE || ace.Header.AceFlags&windows.INHERIT_ONLY_ACE != 0 ||
			ace.Mask&folderWriteRights == 0 {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		if !trusted(sid, user) && !sid.IsWellKnown(windows.WinCreatorOwnerRightsSid) {
			return fmt.Errorf("its access list lets %s write into it", sidName(sid))
		}
	}
	return nil
}

// trusted: the user, SYSTEM or the Administrators group.
func trusted(sid, user *windows.SID) bool {
	return sid.Equals(user) || sid.IsWellKnown(windows.WinLocalSystemSid) || sid.IsWellKnown(windows.WinBuiltinAdministratorsSid)
}

func currentUser() (*windows.SID, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("reading this process's user: %w", err)
	}
	return tu.User.Sid, nil
}

// sidName returns DOMAIN\name (SID) where the name resolves, else the SID.
func sidName(sid *windows.SID) string {
	if sid == nil {
		return "nobody"
	}
	if acct, dom, _, err := sid.LookupAccount(""); err == nil {
		return dom + `\` + acct + " (" + sid.String() + ")"
	}
	return sid.String()
}
