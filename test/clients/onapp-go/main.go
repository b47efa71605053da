// Command onapp-go talks to cmi the way the OnApp Go SDK (github.com/OnApp/onapp-sdk-go, v0.1.58) does,
// with the standard library only, so that CI runs it without fetching anything: the same requests
// (creates wrapped in the record's root, every Edit unwrapped, DELETE of a user with {"force":1}, the
// same headers, HTTP Basic with the login and an API key, a new connection a request) and the same
// decoding into the SDK's typed structs (types.go). It prints one line a call; test/onapp-clients.test.ts
// compares the whole output.
//
//	go run . <base URL> <login> <api key> [groups]
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
)

const mediaType = "application/json"

type client struct {
	base            *url.URL
	login, password string
}

type response struct {
	status               int
	perPage, page, total int
	links                bool
	errors               map[string][]string
}

// do is the SDK's NewRequest and Do: the body JSON-encoded (with json.Encoder's newline), Content-Type
// and Accept on every request, Basic auth, Close set; 2xx decoded into v, anything else into errors.
func (c *client) do(method, path string, body, v interface{}) (*response, error) {
	rel, err := url.Parse(path)
	if err != nil {
		return nil, err
	}
	buf := new(bytes.Buffer)
	if body != nil {
		if err := json.NewEncoder(buf).Encode(body); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequest(method, c.base.ResolveReference(rel).String(), buf)
	if err != nil {
		return nil, err
	}
	req.Close = true
	req.Header.Add("Content-Type", mediaType)
	req.Header.Add("Accept", mediaType)
	req.Header.Add("User-Agent", "onappgo/0.1.58-dev")
	req.SetBasicAuth(c.login, c.password)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out := &response{status: res.StatusCode}
	// populateLinks: from X-Limit, X-Page and X-Total.
	limit, page, total := res.Header.Get("X-Limit"), res.Header.Get("X-Page"), res.Header.Get("X-Total")
	if limit != "" || page != "" || total != "" {
		out.links = true
		out.perPage, _ = strconv.Atoi(limit)
		out.page, _ = strconv.Atoi(page)
		out.total, _ = strconv.Atoi(total)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		var e errorBody
		if err := json.NewDecoder(res.Body).Decode(&e); err != nil {
			return out, fmt.Errorf("error body: %v", err)
		}
		out.errors = e.Errors
		return out, nil
	}
	if v != nil {
		if err := json.NewDecoder(res.Body).Decode(v); err != nil {
			return out, fmt.Errorf("decode: %v", err)
		}
	}
	return out, nil
}

func compact(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "marshal: " + err.Error()
	}
	return string(b)
}

// report prints "<call>: <status> <what was decoded>"; a transport or decoding error stops the program,
// as it fails the SDK's call.
func report(call string, res *response, err error, decoded string) {
	if err != nil {
		fmt.Printf("%s: FAILED %v\n", call, err)
		os.Exit(1)
	}
	line := fmt.Sprintf("%s: %d", call, res.status)
	if res.links {
		line += fmt.Sprintf(" links=%d/%d/%d", res.perPage, res.page, res.total)
	}
	if res.errors != nil {
		line += " errors=" + compact(res.errors)
	}
	if decoded != "" {
		line += " " + decoded
	}
	fmt.Println(line)
}

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: onapp-go <base URL> <login> <api key> [groups]")
		os.Exit(2)
	}
	base, err := url.Parse(os.Args[1])
	if err != nil {
		panic(err)
	}
	c := &client{base: base, login: os.Args[2], password: os.Args[3]}

	// Client.Version: GET version.json into map[string]string.
	var version map[string]string
	res, err := c.do(http.MethodGet, "version.json", nil, &version)
	report("Version", res, err, compact(version))

	// Not an SDK call (it has none for permissions): the catalogue decoded as its List calls decode.
	var permissions []map[string]Permission
	res, err = c.do(http.MethodGet, "permissions.json?page=2&per_page=20", nil, &permissions)
	first := Permission{}
	if len(permissions) > 0 {
		first = permissions[0]["permission"]
	}
	report("Permissions.List page 2", res, err, fmt.Sprintf("n=%d first=%s", len(permissions), compact(first)))

	// Roles
	var roles []map[string]Role
	res, err = c.do(http.MethodGet, "roles.json?per_page=1", nil, &roles)
	report("Roles.List", res, err, fmt.Sprintf("n=%d first=%s", len(roles), roles[0]["role"].Identifier))
	role := new(roleRoot)
	res, err = c.do(http.MethodPost, "roles.json", &roleCreateRequestRoot{&RoleCreateRequest{Label: "Go readers", PermissionIds: []int{1, 10}}}, role)
	report("Roles.Create", res, err, compact(role.Role))
	roleID := role.Role.ID
	res, err = c.do(http.MethodPut, fmt.Sprintf("roles/%d.json", roleID), &RoleCreateRequest{Label: "Go user readers", PermissionIds: []int{1}}, nil)
	report("Roles.Edit", res, err, "")
	role = new(roleRoot)
	res, err = c.do(http.MethodGet, fmt.Sprintf("roles/%d.json", roleID), nil, role)
	report("Roles.Get", res, err, compact(role.Role))

	// Buckets
	bucket := new(bucketRoot)
	res, err = c.do(http.MethodPost, "billing/buckets.json", &bucketCreateRequestRoot{&BucketCreateRequest{Label: "Gold", CurrencyCode: "EUR", MonthlyPrice: 12.5, AllowsKms: true}}, bucket)
	report("Buckets.Create", res, err, compact(bucket.Bucket))
	bucketID := bucket.Bucket.ID
	res, err = c.do(http.MethodPut, fmt.Sprintf("billing/buckets/%d.json", bucketID), &BucketEditRequest{Label: "Platinum", CurrencyCode: "USD", MonthlyPrice: 99.99, AllowsMak: true}, nil)
	report("Buckets.Edit", res, err, "")
	bucket = new(bucketRoot)
	res, err = c.do(http.MethodGet, fmt.Sprintf("billing/buckets/%d.json", bucketID), nil, bucket)
	report("Buckets.Get", res, err, compact(bucket.Bucket))
	var buckets []map[string]Bucket
	res, err = c.do(http.MethodGet, "billing/buckets.json", nil, &buckets)
	report("Buckets.List", res, err, fmt.Sprintf("n=%d first=%s", len(buckets), buckets[0]["bucket"].Label))

	// Users: role_ids as strings, as the SDK's []string sends them.
	user := new(userRoot)
	res, err = c.do(http.MethodPost, "users.json", &userCreateRequestRoot{&UserCreateRequest{
		Login: "gopher", Email: "gopher@example.com", FirstName: "Go", LastName: "Pher", Password: "gopher-password",
		BucketID: bucketID, RoleIDs: []string{"2", strconv.Itoa(roleID)},
	}}, user)
	report("Users.Create", res, err, summary(user.User))
	userID := user.User.ID
	res, err = c.do(http.MethodPut, fmt.Sprintf("users/%d.json", userID), &UserEditRequest{FirstName: "Gordon", LastName: "Gopher", RoleIDs: []string{strconv.Itoa(roleID)}, BucketID: bucketID}, nil)
	report("Users.Edit", res, err, "")
	user = new(userRoot)
	res, err = c.do(http.MethodGet, fmt.Sprintf("users/%d.json", userID), nil, user)
	report("Users.Get", res, err, compact(user.User))
	// MakeNewAPIKey: POST with no body, the key read as out["user"]["api_key"].(string); the user then
	// authenticates with it.
	var made map[string]interface{}
	res, err = c.do(http.MethodPost, fmt.Sprintf("users/%d/make_new_api_key.json", userID), nil, &made)
	key, _ := made["user"].(map[string]interface{})["api_key"].(string)
	report("Users.MakeNewAPIKey", res, err, fmt.Sprintf("api_key=%d characters", len(key)))
	res, err = (&client{base: c.base, login: "gopher", password: key}).do(http.MethodGet, "version.json", nil, &version)
	report("Version with the new key", res, err, "")
	var users []map[string]User
	res, err = c.do(http.MethodGet, "users.json?page=1&per_page=10", nil, &users)
	logins := []string{}
	for _, u := range users {
		logins = append(logins, u["user"].Login)
	}
	report("Users.List", res, err, strings.Join(logins, ","))
	// A role or a bucket a user holds is not deleted.
	res, err = c.do(http.MethodDelete, fmt.Sprintf("roles/%d.json", roleID), nil, nil)
	report("Roles.Delete held", res, err, "")
	// Users.Delete always sends {"force":1}; cmi marks the user deleted, then removes it.
	res, err = c.do(http.MethodDelete, fmt.Sprintf("users/%d.json", userID), &UserDeleteRequest{Force: 1}, nil)
	report("Users.Delete", res, err, "")
	user = new(userRoot)
	res, err = c.do(http.MethodGet, fmt.Sprintf("users/%d.json", userID), nil, user)
	report("Users.Get deleted", res, err, summary(user.User))
	res, err = c.do(http.MethodDelete, fmt.Sprintf("users/%d.json", userID), &UserDeleteRequest{Force: 1}, nil)
	report("Users.Delete again", res, err, "")
	res, err = c.do(http.MethodGet, fmt.Sprintf("users/%d.json", userID), nil, new(userRoot))
	report("Users.Get removed", res, err, "")
	res, err = c.do(http.MethodDelete, fmt.Sprintf("roles/%d.json", roleID), nil, nil)
	report("Roles.Delete", res, err, "")
	res, err = c.do(http.MethodDelete, fmt.Sprintf("billing/buckets/%d.json", bucketID), nil, nil)
	report("Buckets.Delete", res, err, "")
	res, err = c.do(http.MethodDelete, "roles/1.json", nil, nil)
	report("Roles.Delete system", res, err, "")

	if len(os.Args) > 4 && os.Args[4] == "groups" {
		userGroups(c)
	}

	// A wrong key: what the provider's first call answers.
	bad := &client{base: base, login: c.login, password: "not-the-key"}
	res, err = bad.do(http.MethodGet, "version.json", nil, &version)
	report("Version wrong key", res, err, "")
}

// summary: the fields the Terraform provider reads back from a user.
func summary(u *User) string {
	ids := []string{}
	for _, r := range u.Roles {
		ids = append(ids, strconv.Itoa(r.Role.ID))
	}
	return fmt.Sprintf("id=%d login=%s status=%s first_name=%s last_name=%s bucket_id=%d user_group_id=%d role_ids=[%s]",
		u.ID, u.Login, u.Status, u.FirstName, u.LastName, u.BucketID, u.UserGroupID, strings.Join(ids, ","))
}

// userGroups: the SDK's UserGroups calls, once cmi has /user_groups.
func userGroups(c *client) {
	group := new(userGroupRoot)
	res, err := c.do(http.MethodPost, "user_groups.json", &userGroupCreateRequestRoot{&UserGroupCreateRequest{Label: "Go group"}}, group)
	report("UserGroups.Create", res, err, fmt.Sprintf("label=%s", group.UserGroup.Label))
	groupID := group.UserGroup.ID
	res, err = c.do(http.MethodPut, fmt.Sprintf("user_groups/%d.json", groupID), &UserGroupEditRequest{Label: "Go gophers"}, nil)
	report("UserGroups.Edit", res, err, "")
	group = new(userGroupRoot)
	res, err = c.do(http.MethodGet, fmt.Sprintf("user_groups/%d.json", groupID), nil, group)
	report("UserGroups.Get", res, err, fmt.Sprintf("same id=%t label=%s", group.UserGroup.ID == groupID, group.UserGroup.Label))
	var groups []map[string]UserGroup
	res, err = c.do(http.MethodGet, "user_groups.json", nil, &groups)
	found := false
	for _, g := range groups {
		found = found || g["user_group"].ID == groupID
	}
	res.links = false
	report("UserGroups.List", res, err, fmt.Sprintf("found=%t", found))
	user := new(userRoot)
	res, err = c.do(http.MethodPost, "users.json", &userCreateRequestRoot{&UserCreateRequest{
		Login: "grouped", Email: "grouped@example.com", Password: "grouped-password", UserGroupID: groupID,
	}}, user)
	report("Users.Create in group", res, err, fmt.Sprintf("in group=%t", user.User.UserGroupID == groupID))
	userID := user.User.ID
	res, err = c.do(http.MethodPut, fmt.Sprintf("users/%d.json", userID), &UserEditRequest{FirstName: "Grouped"}, nil)
	report("Users.Edit in group", res, err, "")
	user = new(userRoot)
	res, err = c.do(http.MethodGet, fmt.Sprintf("users/%d.json", userID), nil, user)
	report("Users.Get in group", res, err, fmt.Sprintf("first_name=%s in group=%t", user.User.FirstName, user.User.UserGroupID == groupID))
	for i := 0; i < 2; i++ {
		res, err = c.do(http.MethodDelete, fmt.Sprintf("users/%d.json", userID), &UserDeleteRequest{Force: 1}, nil)
		report("Users.Delete in group", res, err, "")
	}
	res, err = c.do(http.MethodDelete, fmt.Sprintf("user_groups/%d.json", groupID), nil, nil)
	report("UserGroups.Delete", res, err, "")
}
