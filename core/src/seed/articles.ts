import type { TLocale } from '@obmen/shared';

type TSeedArticle = { name: string; locale: TLocale; title: string; body_html: string };

export const SEED_ARTICLES: TSeedArticle[] = [
  {
    name: 'terms',
    locale: 'ru',
    title: 'Пользовательское соглашение',
    body_html: `<p>Настоящее соглашение регулирует использование сервиса Obmen. Регистрируясь, вы подтверждаете, что вам исполнилось 18 лет и вы принимаете эти условия.</p>
<h2>1. Предмет соглашения</h2>
<p>Сервис предоставляет обмен криптовалют и фиатных денег, пополнение и вывод средств, переводы между пользователями и выпуск платёжных карт.</p>
<h2>2. Аккаунт</h2>
<ul><li>Один человек — один аккаунт.</li><li>Вы отвечаете за сохранность пароля и доступа к почте.</li><li>Мы вправе запросить подтверждение личности до проведения операции.</li></ul>
<h2>3. Операции</h2>
<p>Курс и комиссия показываются до подтверждения и действуют в течение срока котировки. Подтверждённая операция отменена быть не может; ошибки исправляются обратной операцией.</p>
<h2>4. Ограничение ответственности</h2>
<p>Сервис не отвечает за задержки платёжных систем и блокчейн-сетей, а также за ошибки в реквизитах, указанных пользователем.</p>
<h2>5. Изменение условий</h2>
<p>Мы уведомляем об изменениях не позднее чем за 7 дней до их вступления в силу.</p>`,
  },
  {
    name: 'terms',
    locale: 'en',
    title: 'Terms of service',
    body_html: `<p>These terms govern your use of the Obmen service. By signing up you confirm that you are at least 18 years old and accept them.</p>
<h2>1. The service</h2>
<p>Obmen exchanges crypto and fiat currencies, takes deposits, pays out withdrawals, moves money between users and issues payment cards.</p>
<h2>2. Your account</h2>
<ul><li>One person, one account.</li><li>You are responsible for your password and your mailbox.</li><li>We may ask you to verify your identity before an operation.</li></ul>
<h2>3. Operations</h2>
<p>The rate and the fee are shown before you confirm and hold for the life of the quote. A confirmed operation cannot be cancelled; mistakes are corrected by a reversing operation.</p>
<h2>4. Liability</h2>
<p>We are not liable for delays of payment systems or blockchain networks, nor for wrong details entered by the user.</p>
<h2>5. Changes</h2>
<p>We announce changes at least 7 days before they take effect.</p>`,
  },
  {
    name: 'privacy',
    locale: 'ru',
    title: 'Политика конфиденциальности',
    body_html: `<p>Мы собираем только данные, необходимые для работы сервиса и выполнения требований закона.</p>
<h2>Какие данные мы храним</h2>
<ul><li>Адрес почты, номер счёта и язык интерфейса.</li><li>Историю операций.</li><li>Документы, загруженные для проверки личности.</li></ul>
<h2>Как мы их защищаем</h2>
<p>Пароли хранятся только в виде стойкого хеша, сессии — в защищённых cookie, недоступных скриптам страницы. Доступ сотрудников к документам журналируется.</p>
<h2>Ваши права</h2>
<p>Вы можете запросить выгрузку или удаление своих данных через поддержку, кроме данных, которые мы обязаны хранить по закону.</p>`,
  },
  {
    name: 'privacy',
    locale: 'en',
    title: 'Privacy policy',
    body_html: `<p>We collect only the data the service needs to work and the law requires us to keep.</p>
<h2>What we keep</h2>
<ul><li>Your email, account number and interface language.</li><li>Your operation history.</li><li>Documents you upload for identity verification.</li></ul>
<h2>How we protect it</h2>
<p>Passwords are stored only as a strong hash, sessions in secure cookies that page scripts cannot read. Staff access to documents is logged.</p>
<h2>Your rights</h2>
<p>You may ask support for an export or deletion of your data, except what the law obliges us to keep.</p>`,
  },
  {
    name: 'aml-kyc',
    locale: 'ru',
    title: 'Политика AML/KYC',
    body_html: `<p>Obmen противодействует отмыванию денег и финансированию терроризма.</p>
<h2>Проверка личности</h2>
<p>Для снятия лимитов нужно подтвердить личность одним из документов: паспорт, ID-карта или водительское удостоверение. Проверка обычно занимает до 24 часов.</p>
<h2>Мониторинг операций</h2>
<p>Мы вправе приостановить операцию и запросить сведения о происхождении средств. Средства из санкционных списков и миксеров не принимаются.</p>`,
  },
  {
    name: 'aml-kyc',
    locale: 'en',
    title: 'AML/KYC policy',
    body_html: `<p>Obmen works against money laundering and the financing of terrorism.</p>
<h2>Identity verification</h2>
<p>To lift limits, verify your identity with a passport, an ID card or a driving licence. Review usually takes up to 24 hours.</p>
<h2>Transaction monitoring</h2>
<p>We may hold an operation and ask where the funds come from. Funds from sanctions lists and mixers are not accepted.</p>`,
  },
  {
    name: 'fees',
    locale: 'ru',
    title: 'Комиссии и лимиты',
    body_html: `<p>Все комиссии показываются до подтверждения операции.</p>
<table><thead><tr><th>Операция</th><th>Комиссия</th></tr></thead><tbody>
<tr><td>Обмен</td><td>0,5% (входит в курс)</td></tr>
<tr><td>Перевод пользователю Obmen</td><td>0%</td></tr>
<tr><td>Пополнение</td><td>по тарифу платёжной системы</td></tr>
<tr><td>Вывод</td><td>от 1% в зависимости от способа</td></tr>
</tbody></table>
<p>При пересчёте суммы округляются в пользу сервиса до минимальной единицы валюты; остаток зачисляется на счёт комиссий.</p>`,
  },
  {
    name: 'fees',
    locale: 'en',
    title: 'Fees and limits',
    body_html: `<p>Every fee is shown before you confirm an operation.</p>
<table><thead><tr><th>Operation</th><th>Fee</th></tr></thead><tbody>
<tr><td>Exchange</td><td>0.5% (included in the rate)</td></tr>
<tr><td>Transfer to an Obmen user</td><td>0%</td></tr>
<tr><td>Deposit</td><td>the payment system's tariff</td></tr>
<tr><td>Withdrawal</td><td>from 1% depending on the method</td></tr>
</tbody></table>
<p>Converted amounts are rounded in the house's favour to the currency's smallest unit; the remainder goes to the fee account.</p>`,
  },
  {
    name: 'contacts',
    locale: 'ru',
    title: 'Контакты',
    body_html: `<p>Поддержка отвечает круглосуточно в чате личного кабинета.</p>
<ul><li>Почта: support@obmen.example</li><li>Вопросы партнёрства: partners@obmen.example</li></ul>`,
  },
  {
    name: 'contacts',
    locale: 'en',
    title: 'Contacts',
    body_html: `<p>Support answers around the clock in your account's chat.</p>
<ul><li>Email: support@obmen.example</li><li>Partnerships: partners@obmen.example</li></ul>`,
  },
  {
    name: 'faq',
    locale: 'ru',
    title: 'Частые вопросы',
    body_html: `<h2>Сколько идёт обмен?</h2><p>Обмен между кошельками Obmen проходит мгновенно после подтверждения.</p>
<h2>Почему курс изменился?</h2><p>Котировка действует ограниченное время. Если срок истёк, получите новую — сумма пересчитается.</p>
<h2>Как пригласить друга?</h2><p>Откройте раздел «Рефералы» и поделитесь ссылкой: вы получите бонус с его обменов.</p>`,
  },
  {
    name: 'faq',
    locale: 'en',
    title: 'Frequently asked questions',
    body_html: `<h2>How long does an exchange take?</h2><p>An exchange between Obmen wallets completes instantly once you confirm.</p>
<h2>Why did the rate change?</h2><p>A quote holds for a limited time. When it expires, get a new one and the amount is recalculated.</p>
<h2>How do I invite a friend?</h2><p>Open the Referral section and share your link: you earn a bonus on their exchanges.</p>`,
  },
  {
    name: 'api',
    locale: 'ru',
    title: 'API для ботов',
    body_html: `<p>Программа (например, торговый бот) может работать с вашим аккаунтом через API: смотреть балансы и историю, обменивать валюты и переводить деньги другим пользователям. Выводить средства и менять настройки через API нельзя.</p>
<h2>Ключ</h2>
<p>Создайте ключ в разделе «Настройки → Безопасность → Ключи API» (нужна включённая двухфакторная аутентификация). Выберите разрешения: <code>read</code> — балансы и история, <code>exchange</code> — обмен, <code>transfer</code> — переводы (для них обязателен список разрешённых IP-адресов). Секрет показывается один раз: сохраните его в надёжном месте. Ключ можно отозвать в любой момент.</p>
<h2>Подпись запроса</h2>
<p>Каждый запрос несёт четыре заголовка: <code>X-Obmen-Key</code> — идентификатор ключа, <code>X-Obmen-Timestamp</code> — время в секундах Unix (не дальше 30 секунд от времени сервера), <code>X-Obmen-Nonce</code> — случайная строка из 8–64 символов <code>A-Za-z0-9_-</code>, новая для каждого запроса, и <code>X-Obmen-Signature</code> — HMAC-SHA256 с секретом ключа в шестнадцатеричном виде от текста: время, перевод строки, nonce, перевод строки, метод, перевод строки, путь с параметрами запроса, перевод строки и тело запроса байт в байт (пустое для GET).</p>
<p>Запрос с истёкшим временем, повторным nonce, неверной подписью, без нужного разрешения или не с того IP-адреса отклоняется (401 или 403 с кодом <code>api_key_…</code>) и ничего не меняет. Не больше 600 запросов в минуту на ключ. Обмены и переводы принимают заголовок <code>Idempotency-Key</code>: повтор с тем же ключом вернёт первый ответ и ничего не изменит.</p>
<h2>Пример: curl</h2>
<pre><code class="language-sh">export OBMEN_URL=https://obmen.example OBMEN_KEY=ok_… OBMEN_SECRET=…

# obmen METHOD PATH [JSON-BODY] [IDEMPOTENCY-KEY]
obmen() {
  method=$1 path=$2 body=\${3:-} idem=\${4:-}
  ts=$(date +%s)
  nonce=$(openssl rand -hex 16)
  sig=$(printf '%s\\n%s\\n%s\\n%s\\n%s' "$ts" "$nonce" "$method" "$path" "$body" | openssl dgst -sha256 -hmac "$OBMEN_SECRET" -r | cut -d' ' -f1)
  set -- -H "X-Obmen-Key: $OBMEN_KEY" -H "X-Obmen-Timestamp: $ts" -H "X-Obmen-Nonce: $nonce" -H "X-Obmen-Signature: $sig"
  if [ -n "$body" ]; then set -- "$@" -H 'Content-Type: application/json' --data-raw "$body"; fi
  if [ -n "$idem" ]; then set -- "$@" -H "Idempotency-Key: $idem"; fi
  curl -sS -X "$method" "$@" "$OBMEN_URL$path"
}

obmen GET /api/wallets
obmen POST /api/exchange/check '{"src":"USDT","dst":"BTC","amount":"10"}'
</code></pre>
<h2>Пример: TypeScript (Node.js 20+)</h2>
<pre><code class="language-ts">import { createHmac, randomBytes, randomUUID } from 'node:crypto';

const { OBMEN_URL = '', OBMEN_KEY = '', OBMEN_SECRET = '' } = process.env;

async function obmen(method: 'GET' | 'POST', path: string, body?: object, idempotencyKey?: string) {
  const text = body === undefined ? '' : JSON.stringify(body);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = randomBytes(16).toString('hex');
  const signature = createHmac('sha256', OBMEN_SECRET).update(\`\${timestamp}\\n\${nonce}\\n\${method}\\n\${path}\\n\${text}\`).digest('hex');
  const headers: Record&lt;string, string&gt; = { 'X-Obmen-Key': OBMEN_KEY, 'X-Obmen-Timestamp': timestamp, 'X-Obmen-Nonce': nonce, 'X-Obmen-Signature': signature };
  if (text) headers['Content-Type'] = 'application/json';
  if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
  const response = await fetch(OBMEN_URL + path, { method, headers, ...(text ? { body: text } : {}) });
  const answer = await response.json();
  if (!response.ok) throw new Error(\`\${answer.code}: \${answer.message}\`);
  return answer;
}

const { wallets } = await obmen('GET', '/api/wallets');
console.log(wallets);
const { quote } = await obmen('POST', '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount: '10' });
console.log(quote);
// To exchange at that quote (the exchange scope; one fresh Idempotency-Key per exchange):
// await obmen('POST', '/api/exchange/USDT/BTC', { quote: quote.token }, randomUUID());
</code></pre>
<p>Все запросы и ответы описаны в документе OpenAPI: <a href="/api/docs/">/api/docs/</a>.</p>`,
  },
  {
    name: 'api',
    locale: 'en',
    title: 'API for bots',
    body_html: `<p>A program (a trading bot, say) can work with your account through the API: read balances and history, exchange currencies and send money to other users. Withdrawals and settings are never reachable through the API.</p>
<h2>The key</h2>
<p>Create a key in Settings → Security → API keys (two-factor authentication must be on). Choose its permissions: <code>read</code> for balances and history, <code>exchange</code> for exchanges, <code>transfer</code> for transfers (which requires a list of allowed IP addresses). The secret is shown once: keep it somewhere safe. You can revoke a key at any time.</p>
<h2>Signing a request</h2>
<p>Every request carries four headers: <code>X-Obmen-Key</code>, the key id; <code>X-Obmen-Timestamp</code>, Unix time in seconds (within 30 seconds of the server's clock); <code>X-Obmen-Nonce</code>, a random string of 8 to 64 of <code>A-Za-z0-9_-</code>, fresh for every request; and <code>X-Obmen-Signature</code>, the hex HMAC-SHA256, keyed with the secret, of this text: the timestamp, a newline, the nonce, a newline, the method, a newline, the path with its query, a newline, and then the raw body byte for byte (empty for GET).</p>
<p>A request that is late, reuses a nonce, is badly signed, lacks the permission or comes from another IP address is refused (401 or 403 with an <code>api_key_…</code> code) and changes nothing. At most 600 requests per minute per key. Exchanges and transfers take an <code>Idempotency-Key</code> header: a repeat with the same key answers the first result and moves nothing.</p>
<h2>Example: curl</h2>
<pre><code class="language-sh">export OBMEN_URL=https://obmen.example OBMEN_KEY=ok_… OBMEN_SECRET=…

# obmen METHOD PATH [JSON-BODY] [IDEMPOTENCY-KEY]
obmen() {
  method=$1 path=$2 body=\${3:-} idem=\${4:-}
  ts=$(date +%s)
  nonce=$(openssl rand -hex 16)
  sig=$(printf '%s\\n%s\\n%s\\n%s\\n%s' "$ts" "$nonce" "$method" "$path" "$body" | openssl dgst -sha256 -hmac "$OBMEN_SECRET" -r | cut -d' ' -f1)
  set -- -H "X-Obmen-Key: $OBMEN_KEY" -H "X-Obmen-Timestamp: $ts" -H "X-Obmen-Nonce: $nonce" -H "X-Obmen-Signature: $sig"
  if [ -n "$body" ]; then set -- "$@" -H 'Content-Type: application/json' --data-raw "$body"; fi
  if [ -n "$idem" ]; then set -- "$@" -H "Idempotency-Key: $idem"; fi
  curl -sS -X "$method" "$@" "$OBMEN_URL$path"
}

obmen GET /api/wallets
obmen POST /api/exchange/check '{"src":"USDT","dst":"BTC","amount":"10"}'
</code></pre>
<h2>Example: TypeScript (Node.js 20+)</h2>
<pre><code class="language-ts">import { createHmac, randomBytes, randomUUID } from 'node:crypto';

const { OBMEN_URL = '', OBMEN_KEY = '', OBMEN_SECRET = '' } = process.env;

async function obmen(method: 'GET' | 'POST', path: string, body?: object, idempotencyKey?: string) {
  const text = body === undefined ? '' : JSON.stringify(body);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = randomBytes(16).toString('hex');
  const signature = createHmac('sha256', OBMEN_SECRET).update(\`\${timestamp}\\n\${nonce}\\n\${method}\\n\${path}\\n\${text}\`).digest('hex');
  const headers: Record&lt;string, string&gt; = { 'X-Obmen-Key': OBMEN_KEY, 'X-Obmen-Timestamp': timestamp, 'X-Obmen-Nonce': nonce, 'X-Obmen-Signature': signature };
  if (text) headers['Content-Type'] = 'application/json';
  if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
  const response = await fetch(OBMEN_URL + path, { method, headers, ...(text ? { body: text } : {}) });
  const answer = await response.json();
  if (!response.ok) throw new Error(\`\${answer.code}: \${answer.message}\`);
  return answer;
}

const { wallets } = await obmen('GET', '/api/wallets');
console.log(wallets);
const { quote } = await obmen('POST', '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount: '10' });
console.log(quote);
// To exchange at that quote (the exchange scope; one fresh Idempotency-Key per exchange):
// await obmen('POST', '/api/exchange/USDT/BTC', { quote: quote.token }, randomUUID());
</code></pre>
<p>Every call and answer is described in the OpenAPI document: <a href="/api/docs/">/api/docs/</a>.</p>`,
  },
];
