/**
 * The door of the notifications area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export {
  forgetThread,
  getNotification,
  listNotifications,
  markAllNotificationsRead,
  markNotification,
  markThreadRead,
  type Notification,
  type NotificationFilter,
  type NotificationThread,
  recordNotifications,
  type ThreadMark,
  unreadNotificationCount,
} from './inbox.js';
export { type NotificationReason, REASON_GROUPS } from './reasons.js';
export { deliveriesFor, getNotificationSettings, setNotificationSettings } from './settings.js';
