-- Configuration without a shell (/ops/config): finance sets what concerns money (rates, payment
-- systems, limits, cards, referral terms), admin the site's settings, content what customers
-- read (menus, articles, footer logos, notifications). A sensitive setting is a `config.change`
-- request (four eyes) that a second operator with the same permission approves.
INSERT INTO ops_permissions (name) VALUES ('config.money'), ('config.site'), ('content.publish');
INSERT INTO ops_role_permissions (role, permission) VALUES ('finance', 'config.money'), ('admin', 'config.site'), ('content', 'content.publish');
