"""Word pools, the field pool and the question templates (data only, no logic).

Everything here is a fixed tuple so that generation order never depends on set or
hash order. ``_world`` builds subjects and documents from these pools and drops any
candidate name that would break the benchmark's rules (a subject containing a field
name, a subject inside a field name or inside template text, a conjunction inside a
name); ``_questions`` renders the templates.
"""

from __future__ import annotations


def _w(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# --- subjects -----------------------------------------------------------------------

# Common words that are subjects of their own (kind "topic"): they lie inside many
# longer subject names. The first four must survive every filter.
REQUIRED_COMMON_WORDS = _w("应用 基础 中国 学习")
TOPICS = REQUIRED_COMMON_WORDS + _w(
    "设计 管理 技术 工程 历史 世界 手机 图书馆 博物馆 大学 借阅台 测试台 服务台 咨询台 "
    "数据 网络 经济 文化 艺术 医学"
)

# Course names: [LEVEL] DOMAIN [SUFFIX [SUFFIX2]] [NUMBER]
COURSE_DOMAINS = _w(
    "计算机 数学 物理 化学 生物 经济 管理 英语 日语 法语 德语 历史 地理 哲学 政治 法律 "
    "心理 教育 新闻 艺术 音乐 美术 体育 医学 药学 护理 统计 金融 会计 财务 市场营销 电子 "
    "通信 自动化 机械 土木 建筑 环境 材料 能源 化工 农业 林业 水利 交通 物流 软件 网络 "
    "数据 信息 人工智能 机器人 天文 海洋 地质 考古 社会 人类 文学 汉语 中国 世界 外国 "
    "西方 城市 旅游 酒店 食品 纺织 服装 影视 戏剧 舞蹈 书法 学习 微积分 代数 几何"
)
COURSE_LEVELS = _w(
    "高等 初等 大学 基础 高级 中级 初级 普通 现代 古代 近代 当代 应用 理论 实验 计算 工程 比较"
)
COURSE_SUFFIXES = _w(
    "应用 基础 原理 导论 概论 分析 设计 方法 工程 技术 实验 实践 理论 专题 前沿 研究 史 "
    "思想 规划 管理 建模 安全 伦理 心理学"
)
COURSE_SUFFIXES2 = _w("基础 实验 实践 专题 导论 方法 案例 研讨 进阶 应用")
COURSE_NUMBERS = ("一", "二", "三", "（上）", "（下）", "Ａ", "Ｂ")

# Person names: SURNAME GIVEN [GIVEN]
SURNAMES = _w(
    "王 李 张 刘 陈 杨 黄 赵 吴 周 徐 孙 马 朱 胡 郭 何 林 罗 郑 梁 谢 宋 唐 许 韩 冯 邓 曹 "
    "彭 曾 肖 田 董 袁 潘 于 蒋 蔡 余 杜 叶 程 苏 魏 吕 丁 任 沈 姚 卢 姜 崔 钟 谭 陆 汪 范 "
    "金 石 廖 贾 夏 韦 付 白 邹 孟 熊 秦 邱 江 尹 薛 闫 段 雷 侯 龙 陶 黎 贺 顾 毛 郝 龚 "
    "邵 万 钱 严 覃 戴 莫 孔 汤 欧阳 司马 诸葛 上官 东方 慕容 令狐 皇甫"
)
GIVEN_CHARS = _w(
    "强 伟 芳 娜 敏 静 丽 磊 洋 勇 艳 杰 军 涛 超 霞 鹏 辉 玲 婷 颖 琳 倩 浩 宇 轩 晨 欣 "
    "怡 萱 瑶 琪 博 睿 涵 梓 皓 彤 悦 桐 楠 帆 峰 斌 刚 毅 俊 凯 昊 琦 菲 雯 蕾 薇 莉 燕 "
    "岚 丹 璐 露 娟 萍 莹 鑫 淼 彬 骏 翔 飞 健 亮 锋 坤 晶 波 兰 梅 松 柏 雪 冰 月 星 阳"
)

# Places: CITY [INSTITUTION [FACILITY]]
CITIES = _w(
    "北京 上海 广州 深圳 杭州 南京 武汉 成都 西安 重庆 天津 苏州 长沙 郑州 青岛 大连 厦门 "
    "福州 昆明 贵阳 南宁 海口 兰州 西宁 银川 拉萨 乌鲁木齐 呼和浩特 哈尔滨 长春 沈阳 石家庄 "
    "太原 济南 合肥 南昌 宁波 温州 无锡 常州 徐州 扬州 洛阳 开封 桂林 三亚 珠海 佛山 东莞 "
    "中山 烟台 威海 绍兴 嘉兴 湖州 金华 泉州 漳州 赣州 九江 岳阳 宜昌 襄阳 绵阳 遵义 大理 "
    "丽江 中国"
)
INSTITUTIONS = _w(
    "大学 师范大学 理工大学 图书馆 博物馆 科技馆 美术馆 体育馆 人民医院 中心医院 火车站 "
    "汽车站 动物园 植物园 人民公园 中山公园 第一中学 实验小学 银行 大剧院 会展中心 国际机场 "
    "档案馆 少年宫"
)
FACILITIES = _w(
    "借阅台 服务台 咨询台 阅览室 自习室 东门 西门 南门 北门 食堂 停车场 报告厅 展厅 售票处 "
    "问询处 急诊部 门诊部 多媒体室 档案室 会议室 测试台 图书馆 体育馆"
)

# Products: BRAND [CATEGORY [MODEL [SERIES]]]
BRANDS = _w(
    "星河 云帆 青禾 远航 蓝鲸 极光 松果 白鹭 金石 长风 海川 北辰 南山 晨曦 流萤 墨竹 青柠 "
    "银杏 飞鸿 锦绣 天穹 追光 小熊 大象 木棉 山茶 海豚 雪豹 赤兔 玄武 朱雀 青鸾 麒麟 凤凰 "
    "鲲鹏 紫藤 橙光 蓝莓 乐途 智行"
)
CATEGORIES = _w(
    "手机 笔记本 平板 耳机 手表 音箱 相机 路由器 显示器 键盘 鼠标 电视 冰箱 洗衣机 空调 "
    "电饭煲 吸尘器 净水器 台灯 充电宝"
)
MODELS = _w("X1 X2 X3 X5 X7 X9 S3 S5 S8 3 5 7 9 10 20 30 K50 M2")
SERIES = _w("Pro Max Air Mini Lite Plus Ultra 青春版 旗舰版 标准版 至尊版 典藏版")

# Books: literary titles, CITY+NOUN, COURSE+BOOK_SUFFIX
BOOK_HEADS = _w(
    "春天 山河 星空 海边 城南 北方 故乡 远方 雨夜 青春 岁月 江湖 长河 孤岛 白夜 黄昏 黎明 "
    "秋水 风雪 草原 边城 围城 雾都 月光 归途 旧梦 晚风 潮汐"
)
BOOK_TAILS = _w("故事 笔记 往事 旧事 札记 传 记 集 手记 随笔 纪事 日记 诗选 散文集 物语 之歌 之旅")
BOOK_SUFFIXES = _w("教程 习题集 讲义 指南 手册 精要 导读 题解 新编")

# Deliberate exceptions: subject names that contain a field name (listed with it).
FIELD_IN_SUBJECT = (
    ("数学分析", "course", "学分"),  # 数|学分|析: the field straddles two words
    ("时间简史", "book", "时间"),
    ("价格理论", "course", "价格"),
    ("颜色心理学", "course", "颜色"),
    ("电话营销实务", "course", "电话"),
    ("语言学概论", "course", "语言"),
    ("面积测量学", "course", "面积"),
)

# --- fields -------------------------------------------------------------------------

GENERAL_FIELDS = _w(
    "编号 类别 简介 备注 负责人 负责人电话 联系人 联系电话 电话 咨询电话 传真 邮箱 电子邮箱 "
    "网址 官方网址 地址 通讯地址 邮编 更新时间 发布时间 所属单位 主管单位 状态 等级 评分 "
    "用户评分 语言 时间 地点"
)
KIND_FIELDS = {
    "course": _w(
        "学分 总学分 实践学分 理论学分 学时 总学时 理论学时 实验学时 课程代码 课程类别 "
        "开课学院 开课学期 授课教师 主讲教师 助教 先修课程 考核方式 考试方式 考试时间 "
        "考试地点 参考教材 参考书目 选课人数 课容量 上课时间 上课地点 上课教室 上课周次 "
        "成绩构成 平时成绩占比 期末成绩占比 适用专业 面向年级 答疑时间 答疑地点 授课语言 "
        "教学目标 课程网站 报名时间 截止时间 补考时间 重修费用"
    ),
    "person": _w(
        "性别 出生日期 出生地 出生地点 籍贯 民族 学历 最高学历 学位 最高学位 职称 职务 "
        "行政职务 工作单位 所在部门 办公室 办公地点 办公电话 研究方向 主要研究方向 毕业院校 "
        "本科院校 导师 博士导师 个人主页 代表作 代表作品 获奖情况 入职时间 工号 身高 体重 "
        "爱好 特长 手机号码 擅长领域 任职时间 出生年份"
    ),
    "place": _w(
        "开放时间 闭馆时间 营业时间 门票价格 门票 所在区域 所属区县 交通方式 最近地铁站 "
        "公交线路 停车位 停车费用 面积 占地面积 建筑面积 容纳人数 座位数 楼层 所在楼层 "
        "建成时间 成立时间 预约方式 预约电话 无障碍设施 周边设施 服务项目 服务电话 借阅规则 "
        "借阅期限 最多借阅册数 藏书量 床位数 海拔 常住人口 人口 邮寄地址 值班电话 节假日安排 "
        "开放日 闭馆日"
    ),
    "product": _w(
        "价格 参考价格 会员价格 价格区间 上市时间 上市日期 生产厂家 产地 原产地 保修期 "
        "保修政策 颜色 外观颜色 重量 机身重量 净重 毛重 尺寸 屏幕尺寸 包装尺寸 分辨率 "
        "屏幕分辨率 处理器 内存 运行内存 存储容量 容量 电池容量 续航时间 充电功率 功率 "
        "额定功率 材质 机身材质 型号 产品型号 操作系统 接口类型 防水等级 能效等级 噪音 "
        "适用人群 包装清单 销量 月销量 售后电话"
    ),
    "book": _w(
        "作者 第一作者 译者 出版社 出版时间 出版日期 版次 印次 页数 字数 定价 开本 装帧 "
        "书号 丛书名 分类号 中图分类号 内容简介 读者对象 获奖记录 豆瓣评分 语种 原作名 "
        "原版语言 责任编辑 编辑 策划编辑 印刷厂 印数"
    ),
    "topic": _w("定义 英文名称 名称 相关词条 所属学科 首次提出时间 提出者 别称 简称"),
}
KINDS = ("topic", "course", "person", "place", "product", "book")

# --- values ---------------------------------------------------------------------------

DIGITS = "〇一二三四五六七八九"
VALUE_WORDS = _w(
    "线上 线下 预约 开放 讲授 研讨 综合 考核 报告 论文 笔试 闭卷 开卷 小组 项目 实训 自主 "
    "集中 分散 统一 每周 每月 长期 临时 正常 暂停 优先 免费 收费 全部 部分 公开 内部 标准 "
    "特殊 常规 重点 一般 良好 优秀 合格 稳定 持续 定期 不定期 现场 远程 混合 专人 轮值 "
    "值守 登记 备案 审核 通过 待定 更新 维护 升级 提供 支持"
)
COLOURS = _w("红色 橙色 黄色 绿色 青色 蓝色 紫色 黑色 白色 灰色 银色 金色 玫瑰金 深空灰 象牙白")
TITLES = _w("教授 副教授 讲师 研究员 老师 主任 工程师 馆员 经理 编辑")
BUILDINGS = _w("第一教学楼 第二教学楼 第三教学楼 实验楼 综合楼 行政楼 图文中心 东配楼 西配楼")
DISTRICTS = _w("东城区 西城区 朝阳区 海淀区 西湖区 鼓楼区 天河区 南山区 锦江区 雁塔区 历下区")
ROADS = _w("人民路 解放路 中山路 建设路 学院路 文化路 长江路 黄河路 滨江路 新华路")
WEEKDAYS = _w("周一 周二 周三 周四 周五 周六 周日")

# Value class by the end of the field name (first match wins, checked longest first).
VALUE_CLASSES = (
    ("时间", "time"),
    ("日期", "date"),
    ("年份", "year"),
    ("日", "day"),
    ("电话", "phone"),
    ("传真", "phone"),
    ("号码", "phone"),
    ("工号", "code"),
    ("编号", "code"),
    ("代码", "code"),
    ("书号", "code"),
    ("分类号", "code"),
    ("邮编", "code"),
    ("型号", "model"),
    ("地点", "place"),
    ("地址", "place"),
    ("教室", "place"),
    ("办公室", "place"),
    ("出生地", "place"),
    ("产地", "place"),
    ("籍贯", "place"),
    ("区域", "place"),
    ("区县", "place"),
    ("地铁站", "place"),
    ("学分", "credit"),
    ("学时", "hours"),
    ("人数", "people"),
    ("容量", "capacity"),
    ("座位数", "count"),
    ("床位数", "count"),
    ("册数", "count"),
    ("藏书量", "count"),
    ("页数", "count"),
    ("字数", "count"),
    ("印数", "count"),
    ("版次", "count"),
    ("印次", "count"),
    ("销量", "count"),
    ("停车位", "count"),
    ("人口", "people"),
    ("周次", "weeks"),
    ("占比", "percent"),
    ("价格", "price"),
    ("定价", "price"),
    ("费用", "price"),
    ("门票", "price"),
    ("价格区间", "price"),
    ("面积", "area"),
    ("重量", "weight"),
    ("净重", "weight"),
    ("毛重", "weight"),
    ("体重", "weight"),
    ("身高", "length"),
    ("尺寸", "length"),
    ("海拔", "length"),
    ("功率", "power"),
    ("续航", "time"),
    ("噪音", "noise"),
    ("评分", "score"),
    ("等级", "grade"),
    ("颜色", "colour"),
    ("楼层", "floor"),
    ("负责人", "person"),
    ("联系人", "person"),
    ("教师", "person"),
    ("助教", "person"),
    ("导师", "person"),
    ("作者", "person"),
    ("译者", "person"),
    ("编辑", "person"),
    ("提出者", "person"),
)
# Classes whose values are quantities: templates asking "多少" only use these.
NUMERIC_CLASSES = frozenset(
    [
        "credit", "hours", "people", "capacity", "count", "weeks", "percent", "price", "area",
        "weight", "length", "power", "noise", "score",
    ]
)

# --- question templates ---------------------------------------------------------------

POLITE_PREFIXES = ("请问", "麻烦告诉我", "我想知道")  # documented; used inside templates

# (template id, shape, kinds or None for any, needs numeric field, text)
# shape: "single" ({S}, {F}), "multi_subject" ({A}, {B}, {F}), "multi_field" ({S}, {F}, {G})
TEMPLATES = (
    ("T01", "single", None, False, "{S}的{F}是什么？"),
    ("T02", "single", None, False, "{S}的{F}是什么?"),
    ("T03", "single", None, False, "{S}的{F}"),
    ("T04", "single", None, False, "{S}{F}"),
    ("T05", "single", None, False, "{S} {F}"),
    ("T06", "single", None, False, "{S}\u3000{F}"),
    ("T07", "single", None, False, "请问{S}的{F}是什么？"),
    ("T08", "single", None, True, "请问{S}{F}是多少？"),
    ("T09", "single", None, False, "麻烦告诉我{S}的{F}。"),
    ("T10", "single", None, False, "麻烦告诉我一下{S}的{F}，谢谢。"),
    ("T11", "single", None, False, "我想知道{S}的{F}。"),
    ("T12", "single", None, False, "我想知道{S}{F}是什么呀？"),
    ("T13", "single", None, False, "{S}的{F}呢？"),
    ("T14", "single", None, True, "{S}的{F}是多少呀?"),
    ("T15", "single", None, False, "{S}{F}呢"),
    ("T16", "single", None, False, "{F}是什么？我问的是{S}。"),
    ("T17", "single", None, False, "{F}，{S}的。"),
    ("T18", "single", None, False, "关于{S}，{F}是什么？"),
    ("T19", "single", None, False, "{S}，{F}？"),
    ("T20", "single", None, False, "你好，请问{S}的{F}是什么呢？"),
    ("T21", "single", None, False, "请问一下，{S}的{F}?"),
    ("T22", "single", None, False, "\u3000{S}的{F}是什么？\u3000"),
    ("T23", "single", None, False, "【{S}】{F}？"),
    ("T24", "single", None, False, "{S}的{F}是什么来着？"),
    ("T25", "single", None, False, "帮我查查{S}的{F}，谢谢！"),
    ("T26", "single", None, False, "能告诉我{S}的{F}吗？"),
    ("T27", "single", None, False, "{S}的{F}，是什么。"),
    (
        "T28",
        "single",
        ("topic", "course", "place", "product", "book"),
        False,
        "请问{S}，它的{F}是什么？",
    ),
    ("T29", "single", ("course",), False, "{S}这门课的{F}是什么？"),
    ("T30", "single", ("course",), True, "请问{S}这门课，{F}是多少？"),
    ("T31", "single", ("person",), False, "{S}这个人的{F}是什么？"),
    ("T32", "single", ("person",), False, "我想知道{S}这个人的{F}呀。"),
    ("T33", "single", ("place",), False, "{S}这个地方的{F}是什么？"),
    ("T34", "single", ("product",), False, "{S}这款产品的{F}是什么？"),
    ("T35", "single", ("book",), False, "{S}这本书的{F}是什么？"),
    ("T36", "single", None, False, "{F}？（{S}）"),
    ("T37", "single", None, False, "想问下{S}的{F}是啥"),
    ("M01", "multi_subject", None, False, "{A}和{B}的{F}"),
    ("M02", "multi_subject", None, False, "{A}与{B}的{F}是什么？"),
    ("M03", "multi_subject", None, False, "{A}、{B}的{F}分别是什么？"),
    ("M04", "multi_subject", None, False, "请问{A}以及{B}的{F}?"),
    ("M05", "multi_subject", None, True, "我想知道{A}和{B}的{F}分别是多少。"),
    ("N01", "multi_field", None, False, "{S}的{F}和{G}"),
    ("N02", "multi_field", None, False, "{S}的{F}与{G}分别是什么？"),
    ("N03", "multi_field", None, False, "请问{S}的{F}、{G}是什么？"),
    ("N04", "multi_field", None, False, "{S}的{F}以及{G}呢?"),
    ("N05", "multi_field", None, False, "麻烦告诉我{S}的{F}和{G}。"),
)

# Strings that may never occur inside a subject or field name.
FORBIDDEN_IN_NAMES = ("：", ":", "的", "和", "与", "、", "以及", " ", "\u3000", "，", "？", "?")

# Made-up subjects for unknown_subject questions: rare characters, checked against
# the corpus so that no corpus subject lies inside them.
RARE_GIVEN = _w(
    "翎 霁 岫 芊 璟 珩 黛 笙 箫 岱 崧 蘅 芷 湄 汐 澈 檀 棠 槿 蔓 筠 翊 珏 琰 瑾 珞 岑 泠 "
    "溪 漪 缇 绾 翮 骞 歆 旻 昶 煦 晗 曜"
)
RARE_PLACE_HEADS = _w("鹭屿 澜沧 栖霞 翠屏 鹤鸣 枫桥 棠溪 雾凇 霁月 苍梧 临渊 听涛 揽月 望舒")
RARE_PLACE_TAILS = _w("镇 村 湾 岭 坊 阁 苑 渡 驿 洲 堡 寨")
RARE_THING_HEADS = _w("琉璃 玳瑁 翡翠 砗磲 琥珀 珊瑚 琺琅 螺钿 缂丝 漆器")
RARE_THING_TAILS = _w("通论 考释 纂要 辑录 谱录 述略 钩沉 丛考")

# Subjects that are always generated (the overlap examples the README talks about).
REQUIRED_SUBJECTS = {
    "course": _w("计算机应用基础 计算机应用 计算机 应用基础 高等数学 数学 数学分析 高等数学（上）"),
    "person": _w("王强 王强强 张伟 张伟杰"),
    "place": _w("北京 北京大学 北京大学图书馆 北京大学图书馆借阅台 中国银行"),
    "product": _w("星河 星河手机 星河手机X3 星河手机X3Pro"),
    "book": _w("高等数学习题集"),
}
# Share of the non-topic subjects per kind.
KIND_SHARES = (
    ("course", 0.34),
    ("person", 0.25),
    ("place", 0.20),
    ("product", 0.12),
    ("book", 0.09),
)
# Fields every required subject has (so nested names share fields with different values).
REQUIRED_FIELDS = {
    "topic": _w("负责人 简介"),
    "course": _w("学分 总学分 上课时间 时间 负责人"),
    "person": _w("职称 办公电话 电话"),
    "place": _w("开放时间 时间 地址"),
    "product": _w("价格 参考价格"),
    "book": _w("作者 出版时间"),
}
