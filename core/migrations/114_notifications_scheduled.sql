-- Notifications an operator scheduled for later (/ops/config/notifications). The body is the
-- operator's form as validated (ZOpsNotificationBody); the `notifications-scheduled` job publishes
-- each once it is due: it claims the row (state 'scheduled' → 'sent') in the transaction that
-- inserts the notifications, so two cores, or a crash between the two, never publish one twice;
-- one whose expiry passed before it could go out lapses.
CREATE TABLE notifications_scheduled (
  id bigserial PRIMARY KEY,
  send_at timestamptz NOT NULL,
  body jsonb NOT NULL,
  state text NOT NULL DEFAULT 'scheduled' CHECK (state IN ('scheduled', 'sent', 'cancelled', 'lapsed')),
  -- operator_audit's actor of whoever scheduled it.
  scheduled_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- When it was sent or cancelled, and the notifications it became.
  done_at timestamptz,
  notification_ids bigint[],
  CHECK ((state = 'scheduled') = (done_at IS NULL))
);
CREATE INDEX notifications_scheduled_due ON notifications_scheduled (send_at, id) WHERE state = 'scheduled';
