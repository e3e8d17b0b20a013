-- Announcements (issue 5): hub-wide news. Kept so that caps can be counted durably and so
-- that a peer joining within 24 hours receives the recent ones once.
CREATE TABLE announcements (
    seq       INTEGER PRIMARY KEY,   -- the routed message's seq
    sender_id INTEGER,               -- NULL for the operator
    sender    TEXT    NOT NULL,
    ts        REAL    NOT NULL
);
CREATE INDEX announcements_sender ON announcements (sender_id, ts);
CREATE INDEX announcements_ts ON announcements (ts);
