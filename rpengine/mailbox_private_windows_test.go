//go:build windows

package rpengine_test

import (
	"os"
	"testing"

	"golang.org/x/sys/windows"
)

// makeOthersWritable gives Everyone full control of the folder p.
func makeOthersWritable(t *testing.T, p string) {
	t.Helper()
	everyone, err := windows.CreateWellKnownSid(windows.WinWorldSid)
	if err != nil {
		t.Fatal(err)
	}
	acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{{
		AccessPermissions: windows.GENERIC_ALL, AccessMode: windows.GRANT_ACCESS,
		Inheritance: windows.SUB_CONTAINERS_AND_OBJECTS_INHERIT,
		Trustee: windows.TRUSTEE{TrusteeForm: windows.TRUSTEE_IS_SID, TrusteeType: windows.TRUSTEE_IS_WELL_KNOWN_GROUP,
			TrusteeValue: windows.TrusteeValueFromSID(everyone)},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetNamedSecurityInfo(p, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION, nil, nil, acl, nil); err != nil {
		t.Fatal(err)
	}
}

// giveAway cannot make another account own a folder without privileges
// a test does not have (SeRestorePrivilege): it says so.
func giveAway(t *testing.T, _ string) bool {
	t.Log("a folder another user owns: left out on Windows, where giving a folder away needs SeRestorePrivilege")
	return false
}

// modeOf: Windows has no permission bits (the ACL decides).
func modeOf(t *testing.T, _ string) (os.FileMode, bool) { return 0, false }
