/**
 * The door of the notifications area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export {
  getNotification,
  listNotifications,
  markAllNotificationsRead,
  markNotification,
  markThreadRead,
  type Notification,
  type NotificationFilter,
  type NotificationThread,
  recordNotifications,
  type SubjectType,
  type ThreadMark,
  unreadNotificationCount,
} from './inbox.js';
export { type NotificationReason, PARTICIPATING_REASONS, REASON_GROUPS, type ReasonGroup, reasonGroup } from './reasons.js';
export { deliveriesFor, type DeliveryChoice, getNotificationSettings, setNotificationSettings } from './settings.js';
