/*
 * The AppContainer of one run: a profile made for it alone
 * (aisb.run.<run id>), the check of the suspended child's token, the
 * stage's access for the profile's SID, the network to the gate, and the
 * removal of all of it.  docs/windows.md has the design.
 */
#include "config.h"

#include <windows.h>
#include <aclapi.h>
#include <fwpmu.h>
#include <sddl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <userenv.h>

#include "win32/win32.h"

/* WFP keys that mingw-w64's fwpmu.h does not define (fwpmu.h, SDK). */
static const GUID layer_connect_v4 = { 0xc38d57d1, 0x05a7, 0x4c33,
    { 0x90, 0x4f, 0x7f, 0xbc, 0xee, 0xe6, 0x0e, 0x82 } };
static const GUID layer_connect_v6 = { 0x4a72393b, 0x319f, 0x44bc,
    { 0x84, 0xc3, 0xba, 0x54, 0xdc, 0xb3, 0xb6, 0xb4 } };
static const GUID cond_package_id = { 0x71bc78fa, 0xf17c, 0x4997,
    { 0xa6, 0x02, 0x6a, 0xbb, 0x26, 0x1f, 0x35, 0x1c } };
static const GUID cond_remote_address = { 0xb235ae9a, 0x1d64, 0x49b8,
    { 0xa4, 0x4c, 0x5f, 0xf3, 0xd9, 0x09, 0x50, 0x45 } };
static const GUID cond_remote_port = { 0xc35a604d, 0xd22b, 0x4e1a,
    { 0x91, 0xb4, 0x68, 0xf6, 0x74, 0xee, 0x67, 0x4b } };
#ifndef FWPM_SESSION_FLAG_DYNAMIC
#define FWPM_SESSION_FLAG_DYNAMIC	0x00000001
#endif

/* FirewallAPI.dll's loopback exemption list (networkisolation.h) */
typedef DWORD (WINAPI *ni_get_fn)(DWORD *, PSID_AND_ATTRIBUTES *);
typedef DWORD (WINAPI *ni_set_fn)(DWORD, PSID_AND_ATTRIBUTES);

static int
herr(char *err, size_t errlen, const char *what, DWORD code)
{
	char e[160];

	snprintf(err, errlen, "%s: %s", what, w32_strerror(code, e, sizeof(e)));
	return -1;
}

int
w32_appc_available(char *err, size_t errlen)
{
	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll"), ue;

	/* Wine exports CreateAppContainerProfile as a stub that aborts */
	if (ntdll != NULL && GetProcAddress(ntdll, "wine_get_version") != NULL) {
		snprintf(err, errlen, "this is Wine, which has no AppContainer "
		    "(CreateAppContainerProfile is a stub): the sandbox cannot "
		    "be made here; run aisb on Windows 10 or later");
		return -1;
	}
	ue = LoadLibraryW(L"userenv.dll");
	if (ue == NULL || GetProcAddress(ue, "CreateAppContainerProfile") ==
	    NULL) {
		snprintf(err, errlen, "this Windows has no AppContainer "
		    "(userenv.dll lacks CreateAppContainerProfile): Windows 8 "
		    "or later is needed");
		return -1;
	}
	return 0;
}

int
w32_appc_create(struct w32_appc *a, const char *name, uint16_t gate_port,
    char *err, size_t errlen)
{
	HRESULT hr;
	PSID cap = NULL;

	memset(a, 0, sizeof(*a));
	if (w32_appc_available(err, errlen) == -1)
		return -1;
	if (!winrun_profile_valid(name) || (a->name = w32_wide(name)) == NULL) {
		snprintf(err, errlen, "bad profile name %s", name);
		return -1;
	}
	/*
	 * No capability at all by default: no network of any kind.  With
	 * the gate, internetClient (S-1-15-3-1) alone, and the WFP filters
	 * of w32_appc_network narrow it to 127.0.0.1:PORT.
	 */
	if (gate_port != 0) {
		if (!ConvertStringSidToSidW(L"S-1-15-3-1", &cap))
			return herr(err, errlen, "capability SID", GetLastError());
		a->caps[0].Sid = cap;
		a->caps[0].Attributes = SE_GROUP_ENABLED;
		a->ncaps = 1;
	}
	hr = CreateAppContainerProfile(a->name, a->name,
	    L"aisb sandbox run (removed when the run ends)",
	    a->ncaps ? a->caps : NULL, a->ncaps, &a->sid);
	if (hr == HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS)) {
		snprintf(err, errlen, "profile %s exists already: a run id is "
		    "never reused (aisb clean removes a dead run's)", name);
		return -1;
	}
	if (FAILED(hr))
		return herr(err, errlen, "CreateAppContainerProfile",
		    (DWORD)hr);
	a->created = 1;
	return 0;
}

static int
acl_edit(PSID sid, const char *folder, DWORD access, ACCESS_MODE mode,
    char *err, size_t errlen)
{
	EXPLICIT_ACCESS_W ea;
	PACL old = NULL, acl = NULL;
	PSECURITY_DESCRIPTOR sd = NULL;
	wchar_t *w;
	DWORD rc;
	int ret = -1;

	if ((w = w32_wide(folder)) == NULL) {
		snprintf(err, errlen, "%s: not a valid UTF-8 path", folder);
		return -1;
	}
	rc = GetNamedSecurityInfoW(w, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION,
	    NULL, NULL, &old, NULL, &sd);
	if (rc != ERROR_SUCCESS) {
		herr(err, errlen, folder, rc);
		goto fail;
	}
	memset(&ea, 0, sizeof(ea));
	ea.grfAccessPermissions = access;
	ea.grfAccessMode = mode;
	ea.grfInheritance = SUB_CONTAINERS_AND_OBJECTS_INHERIT;
	ea.Trustee.TrusteeForm = TRUSTEE_IS_SID;
	ea.Trustee.TrusteeType = TRUSTEE_IS_WELL_KNOWN_GROUP;
	ea.Trustee.ptstrName = (LPWSTR)sid;
	if ((rc = SetEntriesInAclW(1, &ea, old, &acl)) != ERROR_SUCCESS) {
		herr(err, errlen, "SetEntriesInAcl", rc);
		goto fail;
	}
	rc = SetNamedSecurityInfoW(w, SE_FILE_OBJECT,
	    DACL_SECURITY_INFORMATION, NULL, NULL, acl, NULL);
	if (rc != ERROR_SUCCESS) {
		herr(err, errlen, folder, rc);
		goto fail;
	}
	ret = 0;
fail:
	if (acl != NULL)
		LocalFree(acl);
	if (sd != NULL)
		LocalFree(sd);
	free(w);
	return ret;
}

int
w32_appc_grant(struct w32_appc *a, const char *folder, DWORD access,
    char *err, size_t errlen)
{
	return acl_edit(a->sid, folder, access, GRANT_ACCESS, err, errlen);
}

int
w32_appc_revoke(struct w32_appc *a, const char *folder, char *err,
    size_t errlen)
{
	return acl_edit(a->sid, folder, 0, REVOKE_ACCESS, err, errlen);
}

/* The token information class cls, allocated; NULL on error. */
static void *
token_info(HANDLE tok, TOKEN_INFORMATION_CLASS cls, DWORD *err)
{
	DWORD n = 0;
	void *p;

	GetTokenInformation(tok, cls, NULL, 0, &n);
	if (n == 0 || n > 65536 || (p = malloc(n)) == NULL) {
		*err = GetLastError();
		return NULL;
	}
	if (!GetTokenInformation(tok, cls, p, n, &n)) {
		*err = GetLastError();
		free(p);
		return NULL;
	}
	return p;
}

int
w32_appc_verify(struct w32_appc *a, HANDLE proc, char *err, size_t errlen)
{
	HANDLE tok = NULL;
	DWORD isac = 0, n, code = 0, i;
	TOKEN_APPCONTAINER_INFORMATION *ac = NULL;
	TOKEN_GROUPS *caps = NULL;
	int ret = -1;

	if (!OpenProcessToken(proc, TOKEN_QUERY, &tok))
		return herr(err, errlen, "the child's token", GetLastError());
	if (!GetTokenInformation(tok, TokenIsAppContainer, &isac, sizeof(isac),
	    &n)) {
		herr(err, errlen, "TokenIsAppContainer", GetLastError());
		goto fail;
	}
	if (!isac) {
		snprintf(err, errlen, "the child's token is not an AppContainer "
		    "token: refusing to run it");
		goto fail;
	}
	if ((ac = token_info(tok, TokenAppContainerSid, &code)) == NULL) {
		herr(err, errlen, "TokenAppContainerSid", code);
		goto fail;
	}
	if (ac->TokenAppContainer == NULL ||
	    !EqualSid(ac->TokenAppContainer, a->sid)) {
		snprintf(err, errlen, "the child's AppContainer SID is not the "
		    "run's profile: refusing to run it");
		goto fail;
	}
	/* exactly the capabilities granted, no more */
	if ((caps = token_info(tok, TokenCapabilities, &code)) == NULL) {
		herr(err, errlen, "TokenCapabilities", code);
		goto fail;
	}
	if (caps->GroupCount != a->ncaps) {
		snprintf(err, errlen, "the child's token has %lu capabilities; "
		    "the run granted %lu", (unsigned long)caps->GroupCount,
		    (unsigned long)a->ncaps);
		goto fail;
	}
	for (i = 0; i < a->ncaps; i++)
		if (!EqualSid(caps->Groups[i].Sid, a->caps[i].Sid)) {
			snprintf(err, errlen, "the child's token has another "
			    "capability than the run granted");
			goto fail;
		}
	ret = 0;
fail:
	free(ac);
	free(caps);
	CloseHandle(tok);
	return ret;
}

/* Adds (add=1) or removes our SID in the loopback exemption list. */
static int
loopback(struct w32_appc *a, int add, char *err, size_t errlen)
{
	HMODULE m;
	ni_get_fn get;
	ni_set_fn set;
	PSID_AND_ATTRIBUTES cur = NULL, next = NULL;
	DWORD n = 0, i, k = 0, rc;
	int ret = -1;

	if ((m = LoadLibraryW(L"FirewallAPI.dll")) == NULL)
		return herr(err, errlen, "FirewallAPI.dll", GetLastError());
	get = (ni_get_fn)(void (*)(void))GetProcAddress(m,
	    "NetworkIsolationGetAppContainerConfig");
	set = (ni_set_fn)(void (*)(void))GetProcAddress(m,
	    "NetworkIsolationSetAppContainerConfig");
	if (get == NULL || set == NULL) {
		snprintf(err, errlen, "FirewallAPI.dll has no loopback "
		    "exemption functions (Windows 8 or later is needed)");
		goto fail;
	}
	if ((rc = get(&n, &cur)) != ERROR_SUCCESS) {
		herr(err, errlen, "NetworkIsolationGetAppContainerConfig", rc);
		goto fail;
	}
	if ((next = calloc((size_t)n + 1, sizeof(*next))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < n; i++)
		if (!EqualSid(cur[i].Sid, a->sid))
			next[k++] = cur[i];
	if (add) {
		next[k].Sid = a->sid;
		next[k++].Attributes = 0;
	}
	/* needs administrator rights (docs/windows.md) */
	if ((rc = set(k, next)) != ERROR_SUCCESS) {
		herr(err, errlen, "the loopback exemption "
		    "(NetworkIsolationSetAppContainerConfig; run elevated)", rc);
		goto fail;
	}
	a->loopback = add;
	ret = 0;
fail:
	if (cur != NULL) {
		for (i = 0; i < n; i++)
			HeapFree(GetProcessHeap(), 0, cur[i].Sid);
		HeapFree(GetProcessHeap(), 0, cur);
	}
	free(next);
	FreeLibrary(m);
	return ret;
}

static int
wfp_filter(HANDLE eng, const GUID *layer, PSID sid, uint16_t port,
    int permit, char *err, size_t errlen)
{
	FWPM_FILTER0 f;
	FWPM_FILTER_CONDITION0 c[3];
	UINT64 id;
	DWORD rc;

	memset(&f, 0, sizeof(f));
	memset(c, 0, sizeof(c));
	c[0].fieldKey = cond_package_id;
	c[0].matchType = FWP_MATCH_EQUAL;
	c[0].conditionValue.type = FWP_SID;
	c[0].conditionValue.sid = (SID *)sid;
	f.numFilterConditions = 1;
	if (permit) {
		c[1].fieldKey = cond_remote_address;
		c[1].matchType = FWP_MATCH_EQUAL;
		c[1].conditionValue.type = FWP_UINT32;
		c[1].conditionValue.uint32 = 0x7f000001;	/* 127.0.0.1 */
		c[2].fieldKey = cond_remote_port;
		c[2].matchType = FWP_MATCH_EQUAL;
		c[2].conditionValue.type = FWP_UINT16;
		c[2].conditionValue.uint16 = port;
		f.numFilterConditions = 3;
	}
	f.filterCondition = c;
	f.layerKey = *layer;
	f.displayData.name = permit ? L"aisb: the run may reach its gate" :
	    L"aisb: the run reaches nothing else";
	f.action.type = permit ? FWP_ACTION_PERMIT : FWP_ACTION_BLOCK;
	/* the permit outweighs the block; both only match our package */
	f.weight.type = FWP_UINT8;
	f.weight.uint8 = permit ? 15 : 14;
	if ((rc = FwpmFilterAdd0(eng, &f, NULL, &id)) != ERROR_SUCCESS)
		return herr(err, errlen, "FwpmFilterAdd0 (run elevated)", rc);
	return 0;
}

int
w32_appc_network(struct w32_appc *a, uint16_t gate_port, char *err,
    size_t errlen)
{
	FWPM_SESSION0 s;
	DWORD rc;

	/*
	 * A dynamic WFP session: its filters vanish when the runner's
	 * handle closes, also when the runner dies, so a crash cannot leave
	 * the rules behind (nor the access they grant).
	 */
	memset(&s, 0, sizeof(s));
	s.flags = FWPM_SESSION_FLAG_DYNAMIC;
	rc = FwpmEngineOpen0(NULL, RPC_C_AUTHN_WINNT, NULL, &s, &a->wfp);
	if (rc != ERROR_SUCCESS) {
		a->wfp = NULL;
		return herr(err, errlen, "FwpmEngineOpen0 (run elevated)", rc);
	}
	if (wfp_filter(a->wfp, &layer_connect_v4, a->sid, 0, 0, err,
	    errlen) == -1 ||
	    wfp_filter(a->wfp, &layer_connect_v6, a->sid, 0, 0, err,
	    errlen) == -1 ||
	    wfp_filter(a->wfp, &layer_connect_v4, a->sid, gate_port, 1, err,
	    errlen) == -1)
		return -1;
	return loopback(a, 1, err, errlen);
}

int
w32_appc_delete(struct w32_appc *a, char *err, size_t errlen)
{
	HRESULT hr;
	DWORD i;
	int ret = 0;

	err[0] = '\0';
	if (a->loopback && loopback(a, 0, err, errlen) == -1)
		ret = -1;
	if (a->wfp != NULL) {
		FwpmEngineClose0(a->wfp);
		a->wfp = NULL;
	}
	if (a->created) {
		hr = DeleteAppContainerProfile(a->name);
		if (FAILED(hr)) {
			herr(err, errlen, "DeleteAppContainerProfile",
			    (DWORD)hr);
			ret = -1;
		} else
			a->created = 0;
	}
	if (a->sid != NULL)
		FreeSid(a->sid);
	for (i = 0; i < a->ncaps; i++)
		LocalFree(a->caps[i].Sid);
	free(a->name);
	memset(a, 0, sizeof(*a));
	return ret;
}

int
w32_appc_delete_name(const char *name, char *err, size_t errlen)
{
	wchar_t *w;
	HRESULT hr;

	if (!winrun_profile_valid(name) || (w = w32_wide(name)) == NULL) {
		snprintf(err, errlen, "%s is not a runner's profile", name);
		return -1;
	}
	hr = DeleteAppContainerProfile(w);
	free(w);
	if (FAILED(hr))
		return herr(err, errlen, "DeleteAppContainerProfile", (DWORD)hr);
	return 0;
}
