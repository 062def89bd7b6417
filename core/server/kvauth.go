package server

import (
	"context"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/security"
)

// kvGuard returns the KV interface's access control over the object-storage service's
// users and the grants stored beside them, with the admin credential holding every
// permission; nil when the user store is not open (no S3 interface and no --kv-auth).
func (s *Server) kvGuard(cred Credential) *security.Guard {
	if s.s3 == nil {
		return nil
	}
	if s.cfg.KVAuth {
		s.log.Info("KV access control on: requests need a user's credentials and permissions",
			"allow_insecure", s.cfg.KVAuthAllowInsecure)
		if s.cfg.KVAuthAllowInsecure {
			s.log.Warn("KV access control accepts credentials over plain HTTP (--kv-auth-allow-insecure): " +
				"secrets travel in clear on the network")
		}
	}
	return security.NewGuard(s3Users{s.s3}, security.NewStore(localDB(s.db)), cred.Matches)
}

// s3Users are the object-storage service's users as KV access control sees them: key
// id, secret and status, read through the service's user cache.
type s3Users struct{ svc *s3.Service }

// User implements security.Users.
func (u s3Users) User(ctx context.Context, keyID string) (secret string, enabled, found bool, err error) {
	user, err := u.svc.UserByKey(ctx, keyID)
	switch {
	case s3.IsCode(err, s3.NoSuchUser):
		return "", false, false, nil
	case err != nil:
		return "", false, false, err
	}
	return user.KeySecret, user.Enabled(), true, nil
}
