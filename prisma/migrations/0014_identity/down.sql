-- DropForeignKey
ALTER TABLE "auth_sessions" DROP CONSTRAINT "auth_sessions_user_id_fkey";

-- DropForeignKey
ALTER TABLE "mfa_recovery_codes" DROP CONSTRAINT "mfa_recovery_codes_user_id_fkey";

-- DropForeignKey
ALTER TABLE "password_resets" DROP CONSTRAINT "password_resets_user_id_fkey";

-- DropForeignKey
ALTER TABLE "user_identities" DROP CONSTRAINT "user_identities_user_id_fkey";

-- DropForeignKey
ALTER TABLE "service_accounts" DROP CONSTRAINT "service_accounts_user_id_fkey";

-- DropForeignKey
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_webhook_id_fkey";

-- AlterTable
ALTER TABLE "users" DROP COLUMN "kind",
DROP COLUMN "mfa_last_step",
DROP COLUMN "mfa_pending_secret",
DROP COLUMN "must_change_password";

-- DropTable
DROP TABLE "auth_sessions";

-- DropTable
DROP TABLE "mfa_challenges";

-- DropTable
DROP TABLE "mfa_recovery_codes";

-- DropTable
DROP TABLE "password_resets";

-- DropTable
DROP TABLE "invitations";

-- DropTable
DROP TABLE "oidc_states";

-- DropTable
DROP TABLE "user_identities";

-- DropTable
DROP TABLE "service_accounts";

-- DropTable
DROP TABLE "pii_access_log";

-- DropTable
DROP TABLE "platform_events";

-- DropTable
DROP TABLE "webhooks";

-- DropTable
DROP TABLE "webhook_deliveries";

-- DropTable
DROP TABLE "integration_sources";
