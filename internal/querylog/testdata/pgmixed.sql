select 1;
select
  aid, abalance
from (values (1, 2), (3, 4)) as t(aid, abalance)
where aid < 3;
select * from nosuchtable;
select 'it''s', E'a\nb', $$dollar ; quoted$$, 1.5e3, -- comment
  /* block */ NULL;
begin;
create temp table tt (id int primary key, v text);
insert into tt values (1, 'x'), (2, 'multi
line');
prepare q(int) as select v from tt where id = $1;
execute q(2);
commit;
