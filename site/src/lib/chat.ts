/** What the chat island gets of the dictionary (pickMessages prefixes). */
export const CHAT_MESSAGE_PREFIXES = ['chat', 'error', 'validation', 'files'] as const;
