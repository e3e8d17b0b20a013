-- Issue 53: the search index's segments are merged by the maintenance round, a slice at a
-- time, never inside a write that happens to cross a threshold (an automatic merge of a
-- million-message index held the writer for tens of milliseconds, a "crisis" merge for more).
-- One last resort stays: a level of 100 segments is merged at once.
INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 0);
INSERT INTO messages_fts (messages_fts, rank) VALUES ('crisismerge', 100);
