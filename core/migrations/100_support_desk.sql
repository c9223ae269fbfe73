-- The support desk of the back office: saved replies an operator puts into the reply box (one
-- set per language), and who resolved a reported private chat.

CREATE TABLE support_saved_replies (
  id bigserial PRIMARY KEY,
  locale text NOT NULL CHECK (locale IN ('ru', 'en')),
  title text NOT NULL CHECK (length(title) BETWEEN 1 AND 100),
  body text NOT NULL CHECK (length(body) BETWEEN 1 AND 4000),
  position integer NOT NULL DEFAULT 0
);
CREATE INDEX support_saved_replies_locale ON support_saved_replies (locale, position, id);

INSERT INTO support_saved_replies (locale, title, body, position) VALUES
  ('ru', 'Приветствие', 'Здравствуйте! Это поддержка Obmen. Чем можем помочь?', 1),
  ('ru', 'Проверяем платёж', 'Спасибо, мы получили ваш вопрос. Проверяем платёж и вернёмся с ответом в течение 15 минут.', 2),
  ('ru', 'Нужен номер операции', 'Пожалуйста, пришлите номер операции из раздела «История» и снимок экрана банковского перевода.', 3),
  ('ru', 'Верификация', 'Проверка документов обычно занимает до 24 часов. Статус виден на странице «Верификация».', 4),
  ('ru', 'Завершение', 'Рады были помочь! Если появятся вопросы, просто напишите сюда.', 5),
  ('en', 'Greeting', 'Hello! This is Obmen support. How can I help you?', 1),
  ('en', 'Checking the payment', 'Thank you, we have your question. We are checking the payment and will be back within 15 minutes.', 2),
  ('en', 'Operation number needed', 'Please send the operation number from the History page and a screenshot of the bank transfer.', 3),
  ('en', 'Verification', 'Checking documents usually takes up to 24 hours. You can see the status on the Verification page.', 4),
  ('en', 'Closing', 'Glad we could help! If anything else comes up, just write here.', 5);

ALTER TABLE chat_reports ADD COLUMN reviewed_by text CHECK (length(reviewed_by) BETWEEN 1 AND 200);
