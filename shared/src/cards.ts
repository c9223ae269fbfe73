import { z } from 'zod';
import { ZOk, ZWalletEnvelope } from './api.ts';
import { ZAmountText, ZCurrencyCode } from './money.ts';
import { ZVisibleText } from './text.ts';
import { ZPasskeyAnswerText } from './passkeys.ts';

/*
 * Payment cards (spec §7 "Cards"): the catalogue of card products, orders, the cards
 * themselves and the issuer's callbacks. Validation messages are i18n keys.
 *
 * One row is both the order and the card. Its status:
 *   placed → confirmed → issuing → issued → (shipped → delivered, physical) → active ⇄ frozen → closed
 *   placed → cancelled (the user; hold released)        confirmed|issuing → failed (the issuer; fee refunded)
 */

export const CARD_KINDS = ['virtual', 'physical'] as const;
export type TCardKind = (typeof CARD_KINDS)[number];

export const CARD_STATUSES = ['placed', 'confirmed', 'issuing', 'issued', 'shipped', 'delivered', 'active', 'frozen', 'closed', 'cancelled', 'failed'] as const;
export type TCardStatus = (typeof CARD_STATUSES)[number];

/** Statuses of an order that has not become a card yet. */
export const CARD_ORDER_STATUSES = ['placed', 'confirmed', 'issuing', 'cancelled', 'failed'] as const satisfies readonly TCardStatus[];
/** Statuses shown under "my cards": the issuer made the card. */
export const CARD_ISSUED_STATUSES = ['issued', 'shipped', 'delivered', 'active', 'frozen', 'closed'] as const satisfies readonly TCardStatus[];

/** The verification level a user needs to order a card. */
export const CARD_REQUIRED_LEVEL = 1;
/** How long a revealed number and CVC stay on screen. */
export const CARD_REVEAL_SECONDS = 60;
/** The issuers this core knows (the path of their callback). */
export const CARD_ISSUERS = ['sandbox'] as const;
export type TCardIssuer = (typeof CARD_ISSUERS)[number];

/** What a card's activity lists. */
export const CARD_ACTIVITY_KINDS = [
  'placed',
  'confirmed',
  'cancelled',
  'issuing',
  'issued',
  'shipped',
  'delivered',
  'activated',
  'failed',
  'revealed',
  'reveal_refused',
  'frozen',
  'unfrozen',
  'topup',
  'withdraw',
  'monthly_fee',
  'monthly_fee_unpaid',
  'closed',
] as const;
export type TCardActivityKind = (typeof CARD_ACTIVITY_KINDS)[number];

const emptyToUndefined = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);

export const ZCardProductId = z
  .string({ error: (issue) => (issue.input === undefined ? 'validation.required' : 'validation.invalid') })
  .trim()
  .min(1, 'validation.required')
  .regex(/^[a-z0-9][a-z0-9-]{1,39}$/, 'cards.product_unknown');

/** A card's (and its order's) public id. */
export const ZCardId = z.uuid({ message: 'validation.invalid' });
export const ZCardParams = z.object({ id: ZCardId });

/**
 * The name embossed on the card: Latin letters, spaces, hyphens, apostrophes and dots, as
 * issuers accept them (2 to 26 characters), kept in capitals.
 */
export const ZNameOnCard = z
  .string({ error: (issue) => (issue.input === undefined ? 'validation.required' : 'validation.invalid') })
  .trim()
  .min(1, 'validation.required')
  .transform((value) => value.replace(/\s+/g, ' ').toUpperCase())
  .pipe(
    z
      .string()
      .regex(/^[A-Z .'-]*$/, 'cards.name_latin')
      .regex(/^[A-Z]/, 'cards.name_latin')
      .min(2, 'cards.name_length')
      .max(26, 'cards.name_length'),
  );

const ZAddressPart = (max: number) => z.preprocess(emptyToUndefined, ZVisibleText(max).optional());

/** POST /api/card/order (form): the delivery address only for a physical card. */
export const ZCardOrderBody = z.object({
  product: ZCardProductId,
  currency: ZCurrencyCode,
  name_on_card: ZNameOnCard,
  address_country: ZAddressPart(60),
  address_city: ZAddressPart(80),
  address_postcode: ZAddressPart(20),
  address_line: ZAddressPart(200),
});
export type TCardOrderBody = z.infer<typeof ZCardOrderBody>;

/** The calls that name one card: confirm, cancel, freeze, unfreeze. */
export const ZCardBody = z.object({ card: ZCardId });

export const ZCardCloseBody = z.object({
  card: ZCardId,
  /** The user confirmed, in the dialog, that closing cannot be undone. */
  confirm: z.preprocess((value) => value === true || value === 'true' || value === 'yes', z.literal(true, { message: 'cards.close_confirm' })),
});

export const ZCardMoveBody = z.object({ card: ZCardId, amount: ZAmountText });
export type TCardMoveBody = z.infer<typeof ZCardMoveBody>;

/** POST /api/card/reveal: the account password or a second-factor code. */
export const ZCardRevealBody = z
  .object({
    card: ZCardId,
    password: z.preprocess(emptyToUndefined, z.string().max(1024).optional()),
    code: z.preprocess(emptyToUndefined, z.string().trim().max(64).optional()),
    passkey: ZPasskeyAnswerText,
  })
  .refine((body) => body.password !== undefined || body.code !== undefined || body.passkey !== undefined, {
    path: ['password'],
    message: 'cards.reveal_secret_required',
  });
export type TCardRevealBody = z.infer<typeof ZCardRevealBody>;

// ---- answers --------------------------------------------------------------------------------

const ZLocalized = z.object({ ru: z.string(), en: z.string() });

export const ZCardProduct = z.object({
  id: z.string(),
  kind: z.enum(CARD_KINDS),
  name: ZLocalized,
  description: ZLocalized,
  currencies: z.array(z.string()),
  fee_currency: z.string(),
  /** Major units. */
  issue_fee: z.string(),
  monthly_fee: z.string(),
  /** Spending limits per card currency, major units. */
  limits: z.array(z.object({ currency: z.string(), day: z.string(), month: z.string() })),
  /** Physical cards: days from confirmation to delivery. */
  delivery_days: z.number().int().nullable(),
  image: z.string(),
});
export type TCardProduct = z.infer<typeof ZCardProduct>;

export const ZCardRequirements = z.object({
  verification_level: z.number().int(),
  user_level: z.number().int(),
  met: z.boolean(),
});

export const ZCardCatalogueResponse = ZOk.extend({ products: z.array(ZCardProduct), requirements: ZCardRequirements });
export type TCardCatalogue = z.infer<typeof ZCardCatalogueResponse>;

export const ZCardAddress = z.object({ country: z.string(), city: z.string(), postcode: z.string(), line: z.string() });

export const ZCardOrder = z.object({
  id: z.string(),
  product: z.object({ id: z.string(), kind: z.enum(CARD_KINDS), name: ZLocalized, image: z.string() }),
  currency: z.string(),
  name_on_card: z.string(),
  address: ZCardAddress.nullable(),
  status: z.enum(CARD_STATUSES),
  fee_currency: z.string(),
  issue_fee: z.string(),
  monthly_fee: z.string(),
  /** Why it ended failed, as an i18n key. */
  reason: z.string().nullable(),
  can_confirm: z.boolean(),
  can_cancel: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type TCardOrder = z.infer<typeof ZCardOrder>;

export const ZCard = z.object({
  id: z.string(),
  kind: z.enum(CARD_KINDS),
  product: z.object({ id: z.string(), name: ZLocalized, image: z.string() }),
  status: z.enum(CARD_STATUSES),
  currency: z.string(),
  name_on_card: z.string(),
  /** BIN, bullets, last four: "4000 12•• •••• 3456". */
  masked: z.string().nullable(),
  last4: z.string().nullable(),
  /** MM/YY */
  expiry: z.string().nullable(),
  /** Major units, in the card's currency. */
  balance: z.string(),
  created_at: z.string(),
});
export type TCard = z.infer<typeof ZCard>;

export const ZCardActivity = z.object({
  kind: z.enum(CARD_ACTIVITY_KINDS),
  amount: z.string().nullable(),
  currency: z.string().nullable(),
  at: z.string(),
});
export type TCardActivity = z.infer<typeof ZCardActivity>;

export const ZCardDetails = ZCard.extend({
  fee_currency: z.string(),
  monthly_fee: z.string(),
  limits: z.object({ day: z.string(), month: z.string() }).nullable(),
  delivery_days: z.number().int().nullable(),
  address: ZCardAddress.nullable(),
  activity: z.array(ZCardActivity),
  can: z.object({ reveal: z.boolean(), freeze: z.boolean(), unfreeze: z.boolean(), close: z.boolean(), topup: z.boolean(), withdraw: z.boolean() }),
  /** The wallet of the card's currency: what a top-up can take. */
  wallet_balance: z.string(),
});
export type TCardDetails = z.infer<typeof ZCardDetails>;

export const ZCardOrderResponse = ZOk.extend({ message: z.string(), order: ZCardOrder, ...ZWalletEnvelope.shape });
export const ZCardOrdersResponse = ZOk.extend({ orders: z.array(ZCardOrder) });
/** GET /api/card/order/{id} */
export const ZCardOrderOneResponse = ZOk.extend({ order: ZCardOrder });
export const ZCardListResponse = ZOk.extend({ cards: z.array(ZCard) });
export const ZCardDetailsResponse = ZOk.extend({ card: ZCardDetails });
export const ZCardChangeResponse = ZOk.extend({ message: z.string(), card: ZCardDetails, ...ZWalletEnvelope.shape });
export const ZCardRevealResponse = ZOk.extend({
  pan: z.string(),
  cvc: z.string(),
  expiry: z.string(),
  name_on_card: z.string(),
  visible_seconds: z.number().int(),
});
export type TCardReveal = z.infer<typeof ZCardRevealResponse>;

/** What an issuer tells us about an order (its signed callback); `id` is the exactly-once key. */
export const ZCardIssuerEvent = z.discriminatedUnion('type', [
  z.object({ id: z.string().min(1).max(200), type: z.literal('order.accepted'), order: z.string().max(200), reference: z.string().min(1).max(200) }),
  z.object({
    id: z.string().min(1).max(200),
    type: z.literal('card.issued'),
    order: z.string().max(200),
    bin: z.string().regex(/^\d{6,8}$/),
    last4: z.string().regex(/^\d{4}$/),
    expiry_month: z.number().int().min(1).max(12),
    expiry_year: z.number().int().min(2000).max(2100),
  }),
  z.object({ id: z.string().min(1).max(200), type: z.enum(['card.shipped', 'card.delivered', 'card.activated']), order: z.string().max(200) }),
  z.object({ id: z.string().min(1).max(200), type: z.literal('order.failed'), order: z.string().max(200), reason: z.string().max(200) }),
]);
export type TCardIssuerEvent = z.infer<typeof ZCardIssuerEvent>;
