<?php
// Talks to cmi the way the OnApp PHP wrapper (OnApp-PHP-Wrapper-External 7.0.0: OnApp.php, User.php,
// Role.php, BillingBucket.php, Helper/Caster/JSON.php) does, with nothing but PHP's own HTTP streams, so
// that CI runs it without curl or the wrapper: its default format (JSON), its URLs (`<url>/<resource>.json?`,
// with the bare `?`), its headers (Content-Type and Accept on every request, `Content-Length: 0` on a GET),
// HTTP Basic, bodies wrapped in the record's root on create AND edit, an edit that sends back every field
// the loaded record had (roles and permissions as the wrapper's serialised PHP objects, the user's
// role_ids unchanged), DELETE of a user with {"force":1} unwrapped; and its reading of answers (the
// content type compared as a string, the version read as a float, the root tag taken off, a list of one
// read as one record). It prints one line a call; test/onapp-clients.test.ts compares the whole output.
//
//   php check.php <url> <admin login> <admin api key> <user login> <user password>

[$_, $url, $adminLogin, $adminKey, $userLogin, $userPassword] = $argv;

const CONTENT = 'application/json';
const CHARSET = 'charset=utf-8';

/** sendRequest: returns [http code, body, error] as the wrapper sees them. */
function send(string $login, string $secret, string $method, string $resource, ?string $data = null, string $query = ''): array {
    global $url;
    $headers = ['Content-Type: ' . CONTENT, 'Accept: ' . CONTENT, 'Authorization: Basic ' . base64_encode("$login:$secret")];
    if ($method === 'GET' && $data === null) $headers[] = 'Content-Length: 0';
    if ($method === 'PUT') $headers[] = 'Content-Length: ' . strlen((string) $data);
    if ($method === 'DELETE' && $data !== null) $headers[] = 'Content-Length: ' . strlen($data);
    // curl 7 (the wrapper's transport) asks to continue before a body over 1024 bytes, such as an edit's.
    if ($data !== null && strlen($data) > 1024) $headers[] = 'Expect: 100-continue';
    // PHP's streams wait for the server to close a kept-alive connection; curl reads by Content-Length.
    $headers[] = 'Connection: close';
    $options = ['method' => $method, 'header' => implode("\r\n", $headers), 'ignore_errors' => true, 'protocol_version' => 1.1];
    if ($data !== null) $options['content'] = $data;
    $body = @file_get_contents(sprintf('%s/%s.%s?%s', $url, $resource, 'json', $query), false, stream_context_create(['http' => $options]));
    if ($body === false) { echo "$method $resource: no response\n"; exit(1); }
    preg_match('#^HTTP/\S+ (\d+)#', $http_response_header[0], $m);
    $code = (int) $m[1];
    $type = null;
    foreach ($http_response_header as $h) if (stripos($h, 'content-type:') === 0) $type = trim(substr($h, 13));
    // A PUT or DELETE answered with no body reads as an empty object.
    if ($body === '' && ($method === 'PUT' || $method === 'DELETE')) $body = '{}';
    $error = null;
    if ($body !== '{}' && $type !== CONTENT . '; ' . CHARSET) $error = 'Bad response content type: ' . $type;
    return [$code, $body, $error];
}

/** Caster_JSON::unserialize: errors for a code over 204, else the record(s) without their root. */
function cast(array $response, string $root) {
    [$code, $body, $error] = $response;
    if ($error !== null) return ['error' => $error];
    if ($body === '{}') return [];
    $data = json_decode($body);
    if ($code > 204) {
        $errors = json_decode(json_encode($data->errors), true);
        return ['errors' => $errors];
    }
    if (is_array($data) && count($data) === 0) return [];
    if (is_array($data) && count($data) > 1) return array_map(fn($item) => $item->$root ?? $item, $data);
    if (is_array($data)) $data = $data[0];
    return $data->$root ?? $data;
}

function line(string $call, array $response, string $what = ''): void {
    echo $call, ': ', $response[0], $what === '' ? '' : ' ' . $what, "\n";
}

/** What the wrapper serialises for a loaded nested record (OnApp_Role, OnApp_Role_Permission): the PHP object. */
function phpObject(string $resource, string $tag): array {
    return [
        '_knownOptions' => ['proxy', 'url', 'data_type', 'charset', 'content', 'debug_mode'],
        'options' => ['proxy' => '', 'url' => $GLOBALS['url'], 'charset' => CHARSET, 'data_type' => 'json', 'content' => CONTENT, 'debug_mode' => false],
        '_ch' => new stdClass(), '_obj' => null, '_resource' => $resource, '_tagRoot' => $tag, '_tagRequired' => null,
        '_is_auth' => false, '_is_changed' => false, '_is_deleted' => false, '_release' => null,
        'logger' => ['_timezone' => 'UTC', '_date_format' => 'Y-m-d H:i:s', '_debug' => false, '_log' => ['2026-11-20 10:00:00 000000' => ['log' => "[MSG]   OnApp_Role::initFields, version 1"]]],
    ];
}

/**
 * getFieldsToSend on an edit: the fields of the wrapper's map, in its order, that are set (isset: a null is
 * never sent), a change before the loaded record's value.
 */
function editBody(string $root, $loaded, array $fields, array $changes): string {
    $out = [];
    foreach ($fields as $field) {
        if (isset($changes[$field])) $out[$field] = $changes[$field];
        elseif (isset($loaded->$field)) {
            $value = $loaded->$field;
            if ($field === 'roles') $value = array_map(fn() => phpObject('roles', 'role'), $value);
            if ($field === 'permissions') $value = array_map(fn() => phpObject('permissions', 'permission'), $value);
            $out[$field] = $value;
        }
    }
    return json_encode([$root => $out]);
}

const USER_FIELDS = ['id', 'activated_at', 'created_at', 'email', 'first_name', 'last_name', 'login', 'deleted_at', 'roles', 'time_zone', 'updated_at', 'status', 'suspend_at', 'user_group_id', 'locale', 'password_changed_at', 'bucket_id', 'role_ids'];
const ROLE_FIELDS = ['id', 'created_at', 'identifier', 'permissions', 'label', 'updated_at', 'users_count', 'permission_ids', 'system'];
const BUCKET_FIELDS = ['id', 'label', 'created_at', 'updated_at', 'currency_code', 'show_price', 'monthly_price', 'allows_mak', 'allows_kms', 'allows_own'];

function roleIds($user): array {
    return array_map(fn($r) => $r->role->id, $user->roles);
}

// OnApp_Factory: GET version.json, the version read as a float.
$a = fn(string $method, string $resource, ?string $data = null, string $query = '') => send($adminLogin, $adminKey, $method, $resource, $data, $query);
$r = $a('GET', 'version');
$version = (float) json_decode($r[1])->version;
line('auth', $r, 'version=' . var_export($version, true));

// OnApp_Role_Permission::getList (no pagination: the first page).
$r = $a('GET', 'permissions');
$list = cast($r, 'permission');
line('Role_Permission getList', $r, 'count=' . count($list) . ' first=' . $list[0]->identifier);

// OnApp_Role: save() of a new role, then load().
$r = $a('POST', 'roles', json_encode(['role' => ['label' => 'PHP readers', 'permission_ids' => [1, 10]]]));
$role = cast($r, 'role');
line('Role save (create)', $r, sprintf('id=%s identifier=%s system=%s users_count=%s permissions=%s', json_encode($role->id), $role->identifier, json_encode($role->system), json_encode($role->users_count), implode(',', array_map(fn($p) => $p->permission->identifier, $role->permissions))));
$roleId = $role->id;
$r = $a('GET', "roles/$roleId");
$loaded = cast($r, 'role');
$r = $a('PUT', "roles/$roleId", editBody('role', $loaded, ROLE_FIELDS, ['label' => 'PHP user readers', 'permission_ids' => [1]]));
line('Role save (edit)', $r);
$r = $a('GET', "roles/$roleId");
$role = cast($r, 'role');
line('Role load', $r, sprintf('label=%s identifier=%s permissions=%s', $role->label, $role->identifier, implode(',', array_map(fn($p) => $p->permission->identifier, $role->permissions))));
// The system role user, edited the same way: its identifier and system flag go back unchanged.
$r = $a('GET', 'roles/2');
$r = $a('PUT', 'roles/2', editBody('role', cast($r, 'role'), ROLE_FIELDS, ['label' => 'Customer']));
line('Role save (edit system role)', $r);
$r = $a('GET', 'roles');
line('Role getList', $r, 'labels=' . implode(',', array_map(fn($x) => $x->label, cast($r, 'role'))));

// OnApp_BillingBucket: show_price defaults to true on create.
$r = $a('POST', 'billing/buckets', json_encode(['bucket' => ['label' => 'PHP bucket', 'show_price' => true, 'monthly_price' => 7]]));
$bucket = cast($r, 'bucket');
line('BillingBucket save (create)', $r, sprintf('id=%s currency_code=%s monthly_price=%s show_price=%s', json_encode($bucket->id), $bucket->currency_code, json_encode($bucket->monthly_price), json_encode($bucket->show_price)));
$bucketId = $bucket->id;
$r = $a('GET', "billing/buckets/$bucketId");
$r = $a('PUT', "billing/buckets/$bucketId", editBody('bucket', cast($r, 'bucket'), BUCKET_FIELDS, ['label' => 'PHP bucket 2', 'monthly_price' => 7.5]));
line('BillingBucket save (edit)', $r);
$r = $a('GET', 'billing/buckets');
$one = cast($r, 'bucket');
// A list of one comes back as the record itself, which getList wraps in an array.
line('BillingBucket getList', $r, sprintf('label=%s monthly_price=%s', $one->label, json_encode($one->monthly_price)));

// OnApp_User: role_ids as numbers, bucket_id.
$r = $a('POST', 'users', json_encode(['user' => ['email' => 'elephant@example.com', 'first_name' => 'El', 'last_name' => 'Ephant', 'login' => 'elephant', 'bucket_id' => $bucketId, 'role_ids' => [2, $roleId], 'password' => 'elephant-password']]));
$user = cast($r, 'user');
line('User save (create)', $r, sprintf('id=%s login=%s status=%s bucket_id=%s role_ids=%s', json_encode($user->id), $user->login, $user->status, json_encode($user->bucket_id), json_encode(roleIds($user))));
$userId = $user->id;
$r = $a('GET', "users/$userId");
$loaded = cast($r, 'user');
$r = $a('PUT', "users/$userId", editBody('user', $loaded, USER_FIELDS, ['first_name' => 'Elle', 'role_ids' => roleIds($loaded)]));
line('User save (edit)', $r);
$r = $a('GET', "users/$userId");
$user = cast($r, 'user');
line('User load', $r, sprintf('first_name=%s time_zone=%s bucket_id=%s role_ids=%s', $user->first_name, json_encode($user->time_zone), json_encode($user->bucket_id), json_encode(roleIds($user))));
// An admin takes the user's added role away.
$r = $a('PUT', "users/$userId", editBody('user', $user, USER_FIELDS, ['role_ids' => [2]]));
line('User save (edit roles)', $r);
$r = $a('GET', "users/$userId");
$user = cast($r, 'user');
line('User load', $r, sprintf('bucket_id=%s role_ids=%s', json_encode($user->bucket_id), json_encode(roleIds($user))));
// make_new_api_key(): a POST with no body; the answer's api_key, then the user authenticates with it.
$r = $a('POST', "users/$userId/make_new_api_key");
$key = cast($r, 'user')->api_key;
line('User make_new_api_key', $r, 'api_key=' . strlen($key) . ' characters');
line('auth (new key)', send('elephant', $key, 'GET', 'version'));
$r = $a('GET', 'users');
line('User getList', $r, 'logins=' . implode(',', array_map(fn($x) => $x->login, cast($r, 'user'))));

// An ordinary user saves its own record: the wrapper sends its role_ids back unchanged.
$u = fn(string $method, string $resource, ?string $data = null) => send($userLogin, $userPassword, $method, $resource, $data);
$r = $u('GET', 'version');
line('auth (user, password)', $r);
$r = $u('GET', 'users');
$self = cast($r, 'user');
line('User getList (user)', $r, 'login=' . $self->login);
$r = $u('PUT', "users/{$self->id}", editBody('user', $self, USER_FIELDS, ['time_zone' => 'Europe/Paris', 'role_ids' => roleIds($self)]));
line('User save (own record)', $r);
$r = $u('PUT', "users/{$self->id}", editBody('user', $self, USER_FIELDS, ['role_ids' => [1]]));
line('User save (own roles)', $r, json_encode(cast($r, 'user')));
$r = $u('GET', "users/{$self->id}");
line('User load (user)', $r, 'time_zone=' . cast($r, 'user')->time_zone);

// OnApp_User::delete(true): {"force":1} with the tmp_holder root, that is unwrapped.
$r = $a('DELETE', "users/$userId", json_encode(['force' => 1]));
line('User delete(force)', $r, json_encode(cast($r, 'user')));
$r = $a('GET', "users/$userId");
line('User load', $r, 'status=' . cast($r, 'user')->status);
$r = $a('DELETE', "users/$userId", json_encode(['force' => 1]));
line('User delete(force) again', $r);
$r = $a('GET', "users/$userId");
line('User load', $r, json_encode(cast($r, 'user')));
$r = $a('DELETE', "roles/$roleId");
line('Role delete', $r);
$r = $a('DELETE', "billing/buckets/$bucketId");
line('BillingBucket delete', $r);
$r = $a('DELETE', 'roles/1');
line('Role delete (admin)', $r, json_encode(cast($r, 'role')));

// OnApp_Factory with a wrong key: not authenticated, the errors read from the body.
$r = send($adminLogin, 'not-the-key', 'GET', 'version');
line('auth (wrong key)', $r, json_encode(json_decode($r[1])->errors));
