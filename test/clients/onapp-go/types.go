package main

// The records and requests of the OnApp Go SDK (github.com/OnApp/onapp-sdk-go, v0.1.58: user.go,
// roles.go, bucket.go, user_group.go, structures.go, ipaddresses.go), copied field for field: the same
// names, json tags and Go types, so a field cmi answers with another JSON type fails the decode here
// exactly as it fails the SDK (and the Terraform provider built on it).

// Infoboxes -
type Infoboxes struct {
	DisplayInfoboxes bool     `json:"display_infoboxes,bool"`
	HiddenInfoboxes  []string `json:"hidden_infoboxes,omitempty"`
}

// Roles -
type Roles struct {
	Role *Role `json:"role,omitempty"`
}

// AdditionalFields -
type AdditionalFields struct {
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
}

// IPAddress -
type IPAddress struct {
	Address         string `json:"address,omitempty"`
	Broadcast       string `json:"broadcast,omitempty"`
	CreatedAt       string `json:"created_at,omitempty"`
	ExternalAddress string `json:"external_address,omitempty"`
	Gateway         string `json:"gateway,omitempty"`
	HypervisorID    int    `json:"hypervisor_id,omitempty"`
	ID              int    `json:"id,omitempty"`
	IPNetID         int    `json:"ip_net_id,omitempty"`
	IPRangeID       int    `json:"ip_range_id,omitempty"`
	Ipv4            bool   `json:"ipv4"`
	LockVersion     int    `json:"lock_version,omitempty"`
	NetworkAddress  string `json:"network_address,omitempty"`
	NetworkID       int    `json:"network_id,omitempty"`
	Prefix          int    `json:"prefix,omitempty"`
	Pxe             bool   `json:"pxe"`
	UpdatedAt       string `json:"updated_at,omitempty"`
	UserID          int    `json:"user_id,omitempty"`
}

// IPAddresses -
type IPAddresses struct {
	IPAddress IPAddress `json:"ip_address,omitempty"`
}

// User -
type User struct {
	ActivatedAt             string             `json:"activated_at,omitempty"`
	AdditionalFields        []AdditionalFields `json:"additional_fields,omitempty"`
	Avatar                  interface{}        `json:"avatar,omitempty"`
	BillingPlanID           int                `json:"billing_plan_id,omitempty"`
	BucketID                int                `json:"bucket_id,omitempty"`
	CdnAccountStatus        string             `json:"cdn_account_status,omitempty"`
	CdnStatus               string             `json:"cdn_status,omitempty"`
	CreatedAt               string             `json:"created_at,omitempty"`
	DeletedAt               string             `json:"deleted_at,omitempty"`
	DiscountDueToFree       float64            `json:"discount_due_to_free,omitempty"`
	DiskSpaceAvailable      float64            `json:"disk_space_available,omitempty"`
	Email                   string             `json:"email,omitempty"`
	FirewallID              int                `json:"firewall_id,omitempty"`
	FirstName               string             `json:"first_name,omitempty"`
	GroupID                 int                `json:"group_id,omitempty"`
	ID                      int                `json:"id,omitempty"`
	Identifier              string             `json:"identifier,omitempty"`
	ImageTemplateGroupID    int                `json:"image_template_group_id,omitempty"`
	Infoboxes               Infoboxes          `json:"infoboxes,omitempty"`
	LastName                string             `json:"last_name,omitempty"`
	Locale                  string             `json:"locale,omitempty"`
	Login                   string             `json:"login,omitempty"`
	MemoryAvailable         float64            `json:"memory_available,omitempty"`
	MonthlyPrice            float64            `json:"monthly_price,omitempty"`
	OutstandingAmount       float64            `json:"outstanding_amount,omitempty"`
	PasswordChangedAt       string             `json:"password_changed_at,omitempty"`
	PaymentAmount           float64            `json:"payment_amount,omitempty"`
	RegisteredYubikey       bool               `json:"registered_yubikey,bool"`
	Roles                   []Roles            `json:"roles,omitempty"`
	Status                  string             `json:"status,omitempty"`
	Supplied                bool               `json:"supplied,bool"`
	SuspendAt               string             `json:"suspend_at,omitempty"`
	SystemTheme             string             `json:"system_theme,omitempty"`
	TimeZone                string             `json:"time_zone,omitempty"`
	TotalAmount             float64            `json:"total_amount,omitempty"`
	TotalAmountWithDiscount float64            `json:"total_amount_with_discount,omitempty"`
	UpdatedAt               string             `json:"updated_at,omitempty"`
	UsedCpus                int                `json:"used_cpus,omitempty"`
	UsedCPUShares           int                `json:"used_cpu_shares,omitempty"`
	UsedDiskSize            int                `json:"used_disk_size,omitempty"`
	UsedIPAddresses         []IPAddresses      `json:"used_ip_addresses,omitempty"`
	UsedMemory              int                `json:"used_memory,omitempty"`
	UseGravatar             bool               `json:"use_gravatar,bool"`
	UserGroupID             int                `json:"user_group_id,omitempty"`
}

// UserCreateRequest -
type UserCreateRequest struct {
	Login            string              `json:"login,omitempty"`
	Email            string              `json:"email,omitempty"`
	FirstName        string              `json:"first_name,omitempty"`
	LastName         string              `json:"last_name,omitempty"`
	Password         string              `json:"password,omitempty"`
	UserGroupID      int                 `json:"user_group_id,omitempty"`
	BucketID         int                 `json:"bucket_id,omitempty"`
	RoleIDs          []string            `json:"role_ids,omitempty"`
	AdditionalFields []*AdditionalFields `json:"additional_fields,omitempty"`
}

// UserEditRequest -
type UserEditRequest struct {
	Email             string              `json:"email,omitempty"`
	FirstName         string              `json:"first_name,omitempty"`
	LastName          string              `json:"last_name,omitempty"`
	Password          string              `json:"password,omitempty"`
	UserGroupID       int                 `json:"user_group_id,omitempty"`
	BucketID          int                 `json:"bucket_id,omitempty"`
	RoleIDs           []string            `json:"role_ids,omitempty"`
	AdditionalFields  []*AdditionalFields `json:"additional_fields,omitempty"`
	SuspendAt         string              `json:"suspend_at,omitempty"`
	RegisteredYubikey bool                `json:"registered_yubikey,bool"`
}

type userCreateRequestRoot struct {
	UserCreateRequest *UserCreateRequest `json:"user"`
}

type userRoot struct {
	User *User `json:"user"`
}

// UserDeleteRequest -
type UserDeleteRequest struct {
	Force int `json:"force,omitempty"`
}

// Permission -
type Permission struct {
	ID         int    `json:"id,omitempty"`
	Identifier string `json:"identifier,omitempty"`
	CreatedAt  string `json:"created_at,omitempty"`
	UpdatedAt  string `json:"updated_at,omitempty"`
	Label      string `json:"label,omitempty"`
}

// Permissions -
type Permissions struct {
	Permission Permission `json:"permission,omitempty"`
}

// Role -
type Role struct {
	ID          int           `json:"id,omitempty"`
	Label       string        `json:"label,omitempty"`
	Identifier  string        `json:"identifier,omitempty"`
	CreatedAt   string        `json:"created_at,omitempty"`
	UpdatedAt   string        `json:"updated_at,omitempty"`
	UsersCount  int           `json:"users_count,omitempty"`
	System      bool          `json:"system,bool"`
	Permissions []Permissions `json:"permissions,omitempty"`
}

// RoleCreateRequest -
type RoleCreateRequest struct {
	Label         string `json:"label,omitempty"`
	PermissionIds []int  `json:"permission_ids,omitempty"`
}

type roleCreateRequestRoot struct {
	RoleCreateRequest *RoleCreateRequest `json:"role"`
}

type roleRoot struct {
	Role *Role `json:"role"`
}

// Bucket -
type Bucket struct {
	ID           int     `json:"id,omitempty"`
	Label        string  `json:"label,omitempty"`
	CreatedAt    string  `json:"created_at,omitempty"`
	UpdatedAt    string  `json:"updated_at,omitempty"`
	CurrencyCode string  `json:"currency_code,omitempty"`
	ShowPrice    bool    `json:"show_price,bool"`
	AllowsMak    bool    `json:"allows_mak,bool"`
	AllowsKms    bool    `json:"allows_kms,bool"`
	AllowsOwn    bool    `json:"allows_own,bool"`
	MonthlyPrice float64 `json:"monthly_price,omitempty"`
}

// BucketCreateRequest -
type BucketCreateRequest struct {
	Label        string  `json:"label,omitempty"`
	CurrencyCode string  `json:"currency_code,omitempty"`
	MonthlyPrice float64 `json:"monthly_price,omitempty"`
	AllowsKms    bool    `json:"allows_kms,bool"`
	AllowsMak    bool    `json:"allows_mak,bool"`
	AllowsOwn    bool    `json:"allows_own,bool"`
}

type bucketCreateRequestRoot struct {
	BucketCreateRequest *BucketCreateRequest `json:"bucket"`
}

// BucketEditRequest -
type BucketEditRequest BucketCreateRequest

type bucketRoot struct {
	Bucket *Bucket `json:"bucket"`
}

// UserBucket -
type UserBucket struct {
	AllowsKms    bool   `json:"allows_kms,bool"`
	AllowsMak    bool   `json:"allows_mak,bool"`
	AllowsOwn    bool   `json:"allows_own,bool"`
	CreatedAt    string `json:"created_at,omitempty"`
	CurrencyCode string `json:"currency_code,omitempty"`
	ID           int    `json:"id,omitempty"`
	Label        string `json:"label,omitempty"`
	ShowPrice    bool   `json:"show_price,bool"`
	UpdatedAt    string `json:"updated_at,omitempty"`
}

// UserBuckets -
type UserBuckets struct {
	UserBucket UserBucket `json:"user_bucket"`
}

// UserGroup -
type UserGroup struct {
	AdditionalFields map[string]interface{} `json:"additional_fields,omitempty"`

	BucketID          int           `json:"bucket_id,omitempty"`
	CreatedAt         string        `json:"created_at,omitempty"`
	DatacenterID      int           `json:"datacenter_id,omitempty"`
	DraasID           int           `json:"draas_id,omitempty"`
	HypervisorID      int           `json:"hypervisor_id,omitempty"`
	ID                int           `json:"id,omitempty"`
	Identifier        string        `json:"identifier,omitempty"`
	Label             string        `json:"label,omitempty"`
	PreconfiguredOnly bool          `json:"preconfigured_only,bool"`
	ProviderVdcID     int           `json:"provider_vdc_id,omitempty"`
	Roles             []Roles       `json:"roles,omitempty"`
	UpdatedAt         string        `json:"updated_at,omitempty"`
	UserBuckets       []UserBuckets `json:"user_buckets,omitempty"`
}

// UserGroupCreateRequest -
type UserGroupCreateRequest struct {
	Label          string `json:"label,omitempty"`
	BillingPlanIDs []int  `json:"billing_plan_ids,omitempty"`
}

// UserGroupEditRequest -
type UserGroupEditRequest struct {
	Label          string   `json:"label,omitempty"`
	RoleIDs        []string `json:"role_ids,omitempty"`
	BillingPlanIDs []int    `json:"billing_plan_ids,omitempty"`
}

type userGroupCreateRequestRoot struct {
	UserGroupCreateRequest *UserGroupCreateRequest `json:"user_group"`
}

type userGroupRoot struct {
	UserGroup *UserGroup `json:"user_group"`
}

// ErrorResponse's body: the SDK decodes an error answer into this.
type errorBody struct {
	Errors map[string][]string `json:"errors,omitempty"`
}
