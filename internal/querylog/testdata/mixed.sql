select 1;
select
  id, k
from sbtest1
where id < 3;
select * from nosuchtable;
use sbtest;
insert into sbtest1 (k, c, pad) values (1, 'multi
line', 'x');
select sleep(1.2);
select "it's", 'a;b', _utf8mb4'é', 0x41, 1.5e3, -- a comment
  /* block */ NULL;
begin;
update sbtest1 set k=k+1 where id in (1,2,3);
rollback;
